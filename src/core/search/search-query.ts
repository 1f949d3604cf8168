/**
 * Queries the search index (search-db.ts): BM25-ranked candidates, scoped
 * to one agent's sessions or to the whole home.
 *
 * A query is words, never FTS5 syntax: each word is quoted (its quotes
 * doubled), so operators (AND, NEAR, *, ^, :, parentheses, quotes) are only
 * text and no query can fail to parse or reach another column. Every word
 * must match first; when that finds fewer than `limit`, candidates matching
 * any word fill the rest (BM25 ranks those matching more words higher).
 *
 * Scope is enforced twice: the agent's scope token in the FTS query, and
 * each ranked row's `agent_id` checked before it is kept.
 */
import { SEARCH_QUERY_WORDS, type SearchHit, type SearchKind } from '../schema/index.js';
import { scopeToken, type SearchDb } from './search-db.js';

export interface SearchOptions {
  /** Only this agent's sessions and learnings; null: every agent in the home. */
  agentId: string | null;
  /** Leave out this session (the caller's own). */
  excludeSessionId?: string;
  limit: number;
}

/** Characters of context a snippet shows around its match (FTS5 counts tokens: 24 ≈ a long sentence). */
const SNIPPET_TOKENS = 24;

/**
 * The query's words, each as a quoted FTS5 string; none when it has no
 * letter or digit at all. NUL and the other C0/C1 controls separate words
 * (SQLite's FTS5 parser ends a string at a NUL).
 */
export function queryWords(query: string): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  // eslint-disable-next-line no-control-regex
  for (const w of query.replace(/[\u0000-\u001f\u007f-\u009f]/g, ' ').split(/\s+/)) {
    if (!/[\p{L}\p{N}]/u.test(w)) continue;
    const key = w.toLowerCase();
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(`"${w.replace(/"/g, '""')}"`);
    if (out.length >= SEARCH_QUERY_WORDS) break;
  }
  return out;
}

/** The FTS5 MATCH expression for `words` joined by `op`, within the agent's scope when given. */
export function matchExpression(words: readonly string[], op: 'AND' | 'OR', agentId: string | null): string {
  const body = words.join(` ${op} `);
  return agentId === null ? body : `scope : "${scopeToken(agentId)}" AND (${body})`;
}

interface HitRow {
  id: number;
  session_id: string;
  event_id: string;
  agent_id: string;
  kind: string;
  title: string | null;
  rank: number;
  created_at: string;
}

/**
 * The ranking, without snippets. The best `fetch` matches are ranked on the
 * FTS table alone (the caller's own session's lines left out there, by the
 * indexed `source`), and only those
 * rows are joined to their documents and sessions: a common word matches
 * tens of thousands of rows, and SQLite computes a query's joins and result
 * columns for every matching row before it sorts. Snippets are made
 * afterwards for the rows kept (snippetOf).
 */
function statement(db: SearchDb, exclude: boolean) {
  return db.prepare(
    `SELECT d.id, d.session_id, d.event_id, d.agent_id, d.kind, d.created_at, s.title, f.rank AS rank
       FROM (SELECT rowid AS id, rank FROM fts
              WHERE fts MATCH @match ${exclude ? `AND rowid NOT IN (SELECT id FROM docs WHERE source = 's:' || @exclude)` : ''}
              ORDER BY rank LIMIT @fetch) f
       LEFT JOIN docs d ON d.id = f.id LEFT JOIN sessions s ON s.session_id = d.session_id
      ORDER BY f.rank`,
  );
}

function snippetOf(db: SearchDb) {
  return db.prepare(`SELECT snippet(fts, 0, '**', '**', '…', ${SNIPPET_TOKENS}) AS snippet FROM fts WHERE fts MATCH @match AND rowid = @id`);
}

/** Ranked candidates for `query`, best first; [] when it has no word to look for. */
export function searchIndex(db: SearchDb, query: string, o: SearchOptions): SearchHit[] {
  const words = queryWords(query);
  if (words.length === 0 || o.limit < 1) return [];
  const st = statement(db, o.excludeSessionId !== undefined);
  /**
   * The best `limit` rows for `op` that are in scope. Every ranked row is
   * checked against the agent and the excluded session (whose learnings the
   * ranking did not leave out), and a row the documents no longer hold is
   * dropped. The scope token in the match already holds the query to the
   * agent, so this rarely drops anything; when it does, more are ranked.
   */
  const ranked = (op: 'AND' | 'OR', limit: number): HitRow[] => {
    const match = matchExpression(words, op, o.agentId);
    for (let fetch = limit; ; fetch *= 4) {
      const all = st.all({ match, fetch, ...(o.excludeSessionId !== undefined ? { exclude: o.excludeSessionId } : {}) }) as Array<HitRow | (Omit<HitRow, 'session_id'> & { session_id: null })>;
      const rows = all.filter((r): r is HitRow => r.session_id !== null && r.session_id !== o.excludeSessionId && (o.agentId === null || r.agent_id === o.agentId));
      if (rows.length >= limit || all.length < fetch) return rows.slice(0, limit);
    }
  };
  const rows = ranked('AND', o.limit);
  if (rows.length < o.limit && words.length > 1) {
    const seen = new Set(rows.map((r) => r.id));
    for (const r of ranked('OR', o.limit + rows.length)) {
      if (rows.length >= o.limit) break;
      if (!seen.has(r.id)) rows.push(r);
    }
  }
  const snip = snippetOf(db);
  const any = matchExpression(words, 'OR', null);
  return rows.map((r) => ({
    session_id: r.session_id,
    event_id: r.event_id,
    agent_id: r.agent_id,
    kind: r.kind as SearchKind,
    title: r.title,
    snippet: ((snip.get({ match: any, id: r.id }) as { snippet: string } | undefined)?.snippet ?? '').replace(/\s+/g, ' ').trim(),
    // bm25() is lower-is-better (negative); shown so that higher is better.
    score: Number((-r.rank).toPrecision(4)),
    created_at: r.created_at,
  }));
}
