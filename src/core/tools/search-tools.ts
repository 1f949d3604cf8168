/**
 * The built-in `search_sessions` and `read_session` tools (docs/memory.md, "Search"):
 * cheap deterministic candidates from the agent's other sessions, then a
 * bounded reread of the log around one of them. Candidates are hints; the
 * reread log is the truth.
 *
 * Scope comes from agent.yaml `memory.search_scope`: `agent` (default) is
 * this agent's sessions and learnings, `home` every agent's. Both tools
 * enforce it; read_session answers a session outside it exactly like one
 * that does not exist.
 *
 * search_sessions first brings the index up to date itself, as far as its
 * scope needs (one stat per session of the scope whose log did not move),
 * so it is current with or without a daemon feeding the index; at most
 * TOOL_CATCH_UP_SESSIONS sessions per call, newest first, and the output
 * says when some were left for later.
 */
import { OpenboaError } from '../errors.js';
import { READ_WINDOW_DEFAULT, ReadSessionInput, SEARCH_LIMIT_DEFAULT, SearchSessionsInput, type SearchHit } from '../schema/index.js';
import { SessionSearch } from '../search/session-search.js';
import { readSessionWindow } from '../search/session-window.js';
import { fail, ok, type Tool, type ToolContext } from './tool.js';

export const SEARCH_SESSIONS_DESCRIPTION =
  "Search this agent's other sessions (messages, tool results, outcome explanations) and its learnings for words, ranked by relevance (BM25). Returns candidates: session_id, event_id, title, a snippet, score and time. They are hints from an index, not facts: reread the surrounding events with read_session before relying on one.";

export const READ_SESSION_DESCRIPTION =
  "Reread a bounded window of another session's log around one event (from search_sessions), or its last events when no event_id is given: the events before and after it, as they were recorded (secrets redacted). The log is the truth; use this to confirm what a search candidate suggests.";

/**
 * The most sessions one search_sessions call reads into the index itself
 * (about 1–2 ms each): a cold index (a daemon just started, the index just
 * deleted) is built by the daemon or `openboa reindex`, not by a tool call
 * holding up the run (and, inside the daemon, every other run).
 */
export const TOOL_CATCH_UP_SESSIONS = 200;

/** Whose sessions the calling agent may see: its own id, or null for every agent's. */
function scopeOf(ctx: ToolContext): string | null {
  const agent = ctx.agent!;
  return agent.def.memory.search_scope === 'home' ? null : agent.id;
}

const oneLine = (s: string) => s.replace(/\s+/g, ' ').trim();

function renderHits(query: string, hits: SearchHit[], scope: string | null): string {
  const where = scope === null ? "this home's other sessions" : `agent ${scope}'s other sessions`;
  const head = `${hits.length} candidate(s) for ${JSON.stringify(query)} from ${where}, best first. These are hints from a search index; the session's log is the truth: reread the context with read_session {session_id, event_id} before relying on one.`;
  if (hits.length === 0) return `No candidates for ${JSON.stringify(query)} in ${where}. The index holds messages, tool results, outcome explanations and learnings; try other words.`;
  const lines = hits.map((h, i) => {
    const title = h.title ? ` "${oneLine(h.title)}"` : '';
    const agent = scope === null ? ` · agent ${h.agent_id}` : '';
    return `${i + 1}. session ${h.session_id}${title}${agent} · event ${h.event_id} · ${h.kind} · ${h.created_at} · score ${h.score}\n   ${h.snippet}`;
  });
  return `${head}\n\n${lines.join('\n')}`;
}

export const searchSessionsTool: Tool<typeof SearchSessionsInput> = {
  name: 'search_sessions',
  description: SEARCH_SESSIONS_DESCRIPTION,
  input: SearchSessionsInput,
  async run(input, ctx) {
    if (!ctx.agent) return fail("search_sessions needs the session's agent, which this call does not know");
    const scope = scopeOf(ctx);
    let search: SessionSearch | null = null;
    try {
      search = SessionSearch.open(ctx.store, ctx.processEnv ?? {});
      const caught = search.catchUp(scope, { maxSessions: TOOL_CATCH_UP_SESSIONS });
      const hits = search.search(input.query, { agentId: scope, excludeSessionId: ctx.sessionId, limit: input.limit ?? SEARCH_LIMIT_DEFAULT });
      const partial = caught.deferred > 0 ? `\n\n(The index is still being built: ${caught.deferred} session(s) are not searchable yet; try again later for a complete answer.)` : '';
      return ok(renderHits(input.query, hits, scope) + partial);
    } catch (e) {
      return fail(`search_sessions could not read the search index: ${(e as Error).message}`);
    } finally {
      search?.close();
    }
  },
};

export const readSessionTool: Tool<typeof ReadSessionInput> = {
  name: 'read_session',
  description: READ_SESSION_DESCRIPTION,
  input: ReadSessionInput,
  async run(input, ctx) {
    if (!ctx.agent) return fail("read_session needs the session's agent, which this call does not know");
    try {
      const w = readSessionWindow(ctx.store, ctx.processEnv ?? {}, {
        sessionId: input.session_id,
        ...(input.event_id !== undefined ? { eventId: input.event_id } : {}),
        before: input.before ?? READ_WINDOW_DEFAULT,
        after: input.after ?? READ_WINDOW_DEFAULT,
        agentId: scopeOf(ctx),
      });
      const title = w.title ? ` "${oneLine(w.title)}"` : '';
      const what = input.event_id ? `around event ${input.event_id}` : 'its last events';
      const head = `Session ${w.sessionId}${title} (agent ${w.agentId}), ${what}: ${w.events.length} event(s) from its log.`;
      const start = w.atStart ? '(the start of the log)' : '(earlier events not shown: raise before)';
      const end = w.atEnd ? '(the end of the log)' : '(later events not shown: raise after, or read from a later event_id)';
      return ok([head, start, ...w.events, end].join('\n'));
    } catch (e) {
      if (OpenboaError.is(e) && e.code === 'not_found') return fail(e.message);
      return fail(`read_session could not read session ${input.session_id}: ${(e as Error).message}`);
    }
  },
};
