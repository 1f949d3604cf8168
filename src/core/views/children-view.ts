/**
 * A parent's children as a person, the parent agent (list_sessions) and
 * runtime/relations.json see them (docs/delegation.md): what the parent's
 * log says of each (agent, title, depth, the last report taken in, the
 * cost of its tree) together with the child's own status from its
 * session.json: running, idle, rescheduling, or requires_action when it
 * waits for a person (who answers it with `openboa confirm <child> ...`).
 * Reading a child never writes its files.
 */
import type { SessionStore } from '../store/session-store.js';
import type { SessionSnapshot } from '../schema/index.js';
import { openActions } from '../store/answer-problem.js';

/** How one child stands. */
export interface ChildView {
  session_id: string;
  agent: string;
  title: string | null;
  depth: number | null;
  /** running, idle, rescheduling, terminated, requires_action (idle, waiting for a person), or missing (no folder). */
  status: string;
  /** The stop reason of the child's last run, from its own log (null while it runs or before its first run). */
  stop_reason: string | null;
  /** Tool uses of the child waiting for a person's answer (a confirmation or a custom tool's result). */
  waiting_on: Array<{ id: string; name: string; kind: 'tool' | 'custom' }>;
  /** The last report the parent took in: the run it was about and how that run ended; null before the first. */
  last_report: { run: string; stop_reason: string } | null;
  /** USD over the child and its descendants, as their latest report tells; null before the first. */
  cost_usd: number | null;
}

/** The child's own state, without writing its session.json; null when it cannot be read. */
function ownState(store: SessionStore, id: string): SessionSnapshot | null {
  // A key of the parent's log is not trusted as a path: only a session id that exists is read.
  if (!store.exists(id)) return null;
  try {
    return store.snapshot(id, { persist: false });
  } catch {
    return null;
  }
}

/** The children of `parent`, oldest first (their ids are UUIDv7). */
export function childrenOf(store: SessionStore, parent: SessionSnapshot): ChildView[] {
  return Object.entries(parent.children)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([id, c]) => {
      const own = ownState(store, id);
      const waiting = own ? openActions(own).map((u) => ({ id: u.id, name: u.name, kind: u.kind })) : [];
      const stop = own?.stop_reason?.type ?? null;
      const status = !own ? 'missing' : own.status === 'idle' && waiting.length > 0 ? 'requires_action' : own.status;
      return {
        session_id: id,
        agent: c.agent,
        title: c.title,
        depth: c.depth ?? own?.depth ?? null,
        status,
        stop_reason: own?.status === 'running' ? null : stop,
        waiting_on: waiting,
        last_report: c.last_report_run ? { run: c.last_report_run, stop_reason: c.status } : null,
        cost_usd: c.tree_usage ? c.tree_usage.cost_usd : null,
      };
    });
}

/** runtime/relations.json: the session's place in its tree. */
export function relationsOf(store: SessionStore, s: SessionSnapshot): Record<string, unknown> {
  return {
    session_id: s.id,
    parent_session_id: s.parent_session_id,
    depth: s.depth,
    children: childrenOf(store, s).map((c) => ({ session_id: c.session_id, agent: c.agent, title: c.title, status: c.status, cost_usd: c.cost_usd })),
    tree_cost_usd: s.tree_usage.cost_usd,
  };
}
