/**
 * Cross-session search as one object (docs/memory.md, "Search"): the index at
 * `<home>/.openboa/search.sqlite`, its indexer and its queries. The CLI and
 * the tools open one per use; the daemon keeps one open and feeds its
 * indexer from its change notifications (src/daemon/search-feed.ts).
 *
 * The index is never the truth: a search's hits are candidates, and
 * read_session rereads the log. It can be deleted at any time; opening it
 * again makes it empty, and catchUp() fills it from the logs.
 *
 * Redacted at output: each hit's title and snippet go through the Redactor
 * of the hit's session (its environment's secrets as `env` has them, and its
 * overrides), whatever the process that indexed them could redact. A hit
 * whose stored text still holds one of those secrets gets its snippet made
 * from the redacted text, so no piece of a secret cut by the snippet's
 * bounds is shown.
 */
import type { SessionStore } from '../store/session-store.js';
import type { SearchHit } from '../schema/index.js';
import { openSearchDb, resetSchema, searchDbFile, type SearchDb } from './search-db.js';
import { SearchIndexer, type CatchUpReport } from './search-indexer.js';
import { queryWords, searchIndex, type SearchOptions } from './search-query.js';
import type { RedactionKey } from './session-redactors.js';

/** Characters of the redacted text a snippet made by plainSnippet shows around its first match. */
const PLAIN_SNIPPET_CHARS = 160;

/** A snippet of `text` around the first of `words` found (or its head), with the same marks as FTS5's. */
function plainSnippet(text: string, words: string[]): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  const lower = flat.toLowerCase();
  let at = -1;
  for (const w of words) {
    const i = lower.indexOf(w.toLowerCase());
    if (i >= 0 && (at < 0 || i < at)) at = i;
  }
  const from = Math.max(0, (at < 0 ? 0 : at) - PLAIN_SNIPPET_CHARS / 2);
  const to = Math.min(flat.length, from + PLAIN_SNIPPET_CHARS);
  return `${from > 0 ? '…' : ''}${flat.slice(from, to)}${to < flat.length ? '…' : ''}`;
}

export class SessionSearch {
  readonly indexer: SearchIndexer;

  private constructor(
    readonly db: SearchDb,
    readonly store: SessionStore,
    env: NodeJS.ProcessEnv,
  ) {
    this.indexer = new SearchIndexer(db, store, env);
  }

  /**
   * Opens (creating, or making again when it is not a usable index) the
   * home's index. `busyMs`: how long a write waits for another process's
   * lock (search-db.ts); the daemon and the tools pass SHORT_BUSY_TIMEOUT_MS.
   */
  static open(store: SessionStore, env: NodeJS.ProcessEnv, file = searchDbFile(store.home), opts: { busyMs?: number } = {}): SessionSearch {
    return new SessionSearch(openSearchDb(file, opts), store, env);
  }

  /** Indexes whatever the logs and learnings gained since the index last saw them (with `agentId`: what a search in that agent's scope needs). */
  catchUp(agentId: string | null = null, opts: { maxSessions?: number; stop?: () => boolean } = {}): CatchUpReport {
    return this.indexer.catchUpAll(agentId, opts);
  }

  /** Empties the index and builds it again from every log (`openboa reindex`). */
  rebuild(): CatchUpReport {
    resetSchema(this.db);
    return this.indexer.catchUpAll();
  }

  /** Ranked candidates, each redacted with its session's Redactor (see above). */
  search(query: string, o: SearchOptions): SearchHit[] {
    const hits = searchIndex(this.db, query, o);
    if (hits.length === 0) return [];
    const words = queryWords(query).map((w) => w.slice(1, -1).replace(/""/g, '"'));
    const session = this.db.prepare('SELECT environment_id, overrides FROM sessions WHERE session_id = ?');
    return hits.flatMap(({ body: stored, ...h }) => {
      const r = this.indexer.redactors.ofSession(h.session_id, session.get(h.session_id) as RedactionKey | undefined);
      if (!r.active) return [h];
      const clean = r.text(stored);
      if (clean !== stored) {
        // Matched only inside a secret: left out, or the hit would confirm a guess at the secret.
        const lower = clean.toLowerCase();
        if (!words.some((w) => lower.includes(w.toLowerCase()))) return [];
      }
      const snippet = clean === stored ? r.text(h.snippet) : plainSnippet(clean, words);
      return [{ ...h, title: h.title === null ? null : r.text(h.title), snippet }];
    });
  }

  /** Rows and sessions in the index (for the CLI and the benchmarks). */
  stats(): { rows: number; sessions: number } {
    const rows = (this.db.prepare('SELECT count(*) AS n FROM docs').get() as { n: number }).n;
    const sessions = (this.db.prepare('SELECT count(*) AS n FROM sessions').get() as { n: number }).n;
    return { rows, sessions };
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}
