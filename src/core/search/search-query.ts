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

/** The FTS rows of the caller's own session's lines, left out of the ranking (its learnings are dropped by the join). */
const OWN_LINES_LEFT_OUT = `AND rowid NOT IN (SELECT id FROM docs WHERE source = 's:' || @exclude)`;

interface HitRow {
  id: number;
  session_id: string;
  event_id: string;
  agent_id: string;
  kind: string;
  title: string | null;
  rank: number;
  created_at: string;
  body: string;
  snippet: string;
}

/** A hit with the whole text of its row, read by the statement that checked its scope (for redaction at output). */
export type RankedHit = SearchHit & { body: string };

/**
 * The ranking and every text it returns, in one statement. The best `fetch`
 * matches are ranked on the FTS table alone (the caller's own session's
 * lines left out there, by the indexed `source`), each with the snippet of
 * its own row: snippet() is an auxiliary function of the FTS cursor, so it
 * can only describe the row that cursor is on. Only those rows are joined to
 * their documents and sessions: a common word matches tens of thousands of
 * rows, and SQLite computes a query's joins and result columns for every
 * matching row before it sorts (FTS5 sorts by rank itself, so the inner
 * LIMIT stops it after `fetch` rows).
 *
 * Scope is checked in the same statement that returns the text: the row's
 * document (inner join: a document no longer held drops the row), its agent
 * and scope token, and its session's agent when the session is known. A
 * wrong join can therefore only lose a hit, never show another agent's text.
 * (A separate snippet lookup by rowid once did show it: FTS5 ignores a
 * `rowid = ?` bound as a JavaScript number, and matched every row.)
 */
function statement(db: SearchDb, exclude: boolean, scoped: boolean) {
  return db.prepare(
    `SELECT d.id, d.session_id, d.event_id, d.agent_id, d.kind, d.created_at, d.body, s.title, f.rank AS rank, f.snippet AS snippet
       FROM (SELECT rowid AS id, rank, snippet(fts, 0, '**', '**', '…', ${SNIPPET_TOKENS}) AS snippet FROM fts
              WHERE fts MATCH @match ${exclude ? OWN_LINES_LEFT_OUT : ''}
              ORDER BY rank LIMIT @fetch) f
       JOIN docs d ON d.id = f.id LEFT JOIN sessions s ON s.session_id = d.session_id
      WHERE 1 ${exclude ? 'AND d.session_id <> @exclude' : ''}
        ${scoped ? 'AND d.agent_id = @agent AND d.scope = @scope AND (s.session_id IS NULL OR s.agent_id = @agent)' : ''}
      ORDER BY f.rank`,
  );
}

/** How many rows the ranking saw, up to @fetch: fewer than @fetch means the matches ran out (no sort: cheap). */
function matchCount(db: SearchDb, exclude: boolean) {
  return db.prepare(
    `SELECT count(*) AS n FROM (SELECT rowid FROM fts WHERE fts MATCH @match ${exclude ? OWN_LINES_LEFT_OUT : ''} LIMIT @fetch)`,
  );
}

/** Ranked candidates for `query`, best first; [] when it has no word to look for. */
export function searchIndex(db: SearchDb, query: string, o: SearchOptions): RankedHit[] {
  const words = queryWords(query);
  if (words.length === 0 || o.limit < 1) return [];
  const st = statement(db, o.excludeSessionId !== undefined, o.agentId !== null);
  const count = matchCount(db, o.excludeSessionId !== undefined);
  const bind = {
    ...(o.excludeSessionId !== undefined ? { exclude: o.excludeSessionId } : {}),
    ...(o.agentId !== null ? { agent: o.agentId, scope: scopeToken(o.agentId) } : {}),
  };
  /**
   * The best `limit` rows for `op` that are in scope. The statement checks
   * every ranked row against the agent and the excluded session (whose
   * learnings the ranking did not leave out), and drops a row the documents
   * no longer hold. The scope token in the match already holds the query to
   * the agent, so this rarely drops anything; when it does, more are ranked.
   */
  const ranked = (op: 'AND' | 'OR', limit: number): HitRow[] => {
    const match = matchExpression(words, op, o.agentId);
    for (let fetch = limit; ; fetch *= 4) {
      const rows = st.all({ match, fetch, ...bind }) as HitRow[];
      if (rows.length >= limit) return rows.slice(0, limit);
      // Some ranked rows were dropped, or the matches ran out: rank more only in the first case.
      const { n } = count.get({ match, fetch, ...bind }) as { n: number };
      if (n < fetch) return rows;
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
  return rows.map((r) => ({
    session_id: r.session_id,
    event_id: r.event_id,
    agent_id: r.agent_id,
    kind: r.kind as SearchKind,
    title: r.title,
    snippet: r.snippet.replace(/\s+/g, ' ').trim(),
    // bm25() is lower-is-better (negative); shown so that higher is better.
    score: Number((-r.rank).toPrecision(4)),
    created_at: r.created_at,
    body: r.body,
  }));
}
