/**
 * GET /v1/search?q=…: the cross-session search `openboa search` runs
 * (core/search/session-search.ts: catch the index up from the logs, then
 * query it), as JSON. The key's alone (server.ts refuses a run token outside
 * /v1/sessions): a run searches through its own `search_sessions` tool.
 * Hits are candidates, redacted per session by the search itself; the
 * session's log is the truth.
 *
 * The catch-up runs in the server's thread (and a daemon's, when it shares
 * the process), so one request indexes at most CATCH_UP_SESSIONS sessions;
 * the rest wait for the next search (or the daemon's own feed), and the
 * answer says `incomplete` meanwhile.
 */
import { Hono } from 'hono';
import * as z from 'zod';
import { DefinitionId, SEARCH_LIMIT_DEFAULT, SEARCH_LIMIT_MAX } from '../core/schema/index.js';
import type { Runtime } from '../core/run/run-context.js';
import { SessionSearch } from '../core/search/session-search.js';
import type { AuthEnv } from './auth.js';
import { queryOf } from './validate.js';

/** Sessions one request may index before it answers: bounds what a first search of a large home holds the thread for. */
export const CATCH_UP_SESSIONS = 200;

const SearchQuery = z.strictObject({
  q: z.string().trim().min(1, 'expected words to look for').max(1000),
  agent_id: DefinitionId.optional(),
  limit: z.coerce.number().int().min(1).max(SEARCH_LIMIT_MAX).default(SEARCH_LIMIT_DEFAULT),
});

export function searchRoutes(rt: Runtime): Hono<AuthEnv> {
  const app = new Hono<AuthEnv>();

  app.get('/search', (c) => {
    const q = queryOf(c, SearchQuery);
    const agent = q.agent_id ?? null;
    const search = SessionSearch.open(rt.store, rt.deps.env);
    try {
      const caught = search.catchUp(agent, { maxSessions: CATCH_UP_SESSIONS });
      const hits = search.search(q.q, { agentId: agent, limit: q.limit });
      return c.json({ query: q.q, agent_id: agent, data: hits, incomplete: caught.busy || caught.deferred > 0 || caught.problems.length > 0 });
    } finally {
      search.close();
    }
  });

  return app;
}
