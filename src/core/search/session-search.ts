/**
 * Cross-session search as one object (docs/memory.md, "Search"): the index at
 * `<home>/.openboa/search.sqlite`, its indexer and its queries. The CLI and
 * the tools open one per use; the daemon keeps one open and feeds its
 * indexer from its change notifications (src/daemon/search-feed.ts).
 *
 * The index is never the truth: a search's hits are candidates, and
 * read_session rereads the log. It can be deleted at any time; opening it
 * again makes it empty, and catchUp() fills it from the logs.
 */
import type { SessionStore } from '../store/session-store.js';
import type { SearchHit } from '../schema/index.js';
import { openSearchDb, resetSchema, searchDbFile, type SearchDb } from './search-db.js';
import { SearchIndexer, type CatchUpReport } from './search-indexer.js';
import { searchIndex, type SearchOptions } from './search-query.js';

export class SessionSearch {
  readonly indexer: SearchIndexer;

  private constructor(
    readonly db: SearchDb,
    readonly store: SessionStore,
    env: NodeJS.ProcessEnv,
  ) {
    this.indexer = new SearchIndexer(db, store, env);
  }

  /** Opens (creating, or making again when it is not a usable index) the home's index. */
  static open(store: SessionStore, env: NodeJS.ProcessEnv, file = searchDbFile(store.home)): SessionSearch {
    return new SessionSearch(openSearchDb(file), store, env);
  }

  /** Indexes whatever the logs and learnings gained since the index last saw them (with `agentId`: what a search in that agent's scope needs). */
  catchUp(agentId: string | null = null, opts: { maxSessions?: number } = {}): CatchUpReport {
    return this.indexer.catchUpAll(agentId, opts);
  }

  /** Empties the index and builds it again from every log (`openboa reindex`). */
  rebuild(): CatchUpReport {
    resetSchema(this.db);
    return this.indexer.catchUpAll();
  }

  search(query: string, o: SearchOptions): SearchHit[] {
    return searchIndex(this.db, query, o);
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
