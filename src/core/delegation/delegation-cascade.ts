/**
 * Interrupts cascade down a session tree (docs/delegation.md). When a run
 * takes in an interrupt, each child that has something to stop gets a
 * `user.interrupt` line appended to its log: the same ingress a person would
 * use. A child has something to stop when it is running, backing off,
 * waiting for a person or has work queued, or when one of its own
 * descendants has (an idle child whose child still works would otherwise be
 * woken by that grandchild's report and carry on). Its own run, taking that
 * interrupt in, does the same for its children, so the whole tree below
 * stops; and the reports the stopped children send back do not wake it
 * again (SessionSnapshot.reports_wait, run/plan.ts).
 */
import type { SessionStore } from '../store/session-store.js';
import type { SessionSnapshot } from '../schema/index.js';
import { openActions } from '../store/answer-problem.js';

/** How far below a child the walk looks: the deepest tree limits.max_spawn_depth allows. */
const MAX_WALK_DEPTH = 64;
/**
 * How many sessions one cascade reads at most (each a snapshot, on the
 * daemon's thread). Past it, the child being looked at counts as busy and
 * is interrupted: stopping too much is safer than a tree an agent grew
 * wide enough to stall the daemon, or one it keeps running.
 */
export const MAX_WALK_SESSIONS = 2_000;

/** `id`'s state when its own log names `parentId` as its parent (a hand-written line cannot point the cascade elsewhere); null otherwise. */
function childState(store: SessionStore, id: string, parentId: string): SessionSnapshot | null {
  try {
    if (!store.exists(id)) return null;
    const c = store.snapshot(id, { persist: false });
    return c.parent_session_id === parentId ? c : null;
  } catch {
    return null; // a child folder that is gone or unreadable has nothing to stop
  }
}

/** Whether the session itself has work that an interrupt stops. */
function busy(c: SessionSnapshot): boolean {
  if (c.status === 'terminated') return false;
  return c.status === 'running' || c.status === 'rescheduling' || openActions(c).length > 0 || c.pending_events.some((p) => p.type !== 'user.interrupt') || c.pending_wakes.length > 0;
}

/** Whether the session or any of its descendants (up to `depthLeft` levels below) has work an interrupt stops. */
function busyTree(store: SessionStore, c: SessionSnapshot, depthLeft: number, seen: Set<string>, maxSessions: number): boolean {
  if (busy(c)) return true;
  if (depthLeft <= 0 || c.status === 'terminated') return false;
  for (const id of Object.keys(c.children)) {
    if (seen.has(id)) continue;
    if (seen.size >= maxSessions) return true;
    // Checked before it is marked: a hand-written report naming a sibling must not hide the sibling from its own walk.
    const g = childState(store, id, c.id);
    if (!g) continue;
    seen.add(id);
    if (busyTree(store, g, depthLeft - 1, seen, maxSessions)) return true;
  }
  return false;
}

/** Appends a user.interrupt to every child of `parentId` that has something to stop in its tree; returns their ids. */
export function cascadeInterrupt(store: SessionStore, parentId: string, reason: string, o: { maxSessions?: number } = {}): string[] {
  const maxSessions = o.maxSessions ?? MAX_WALK_SESSIONS;
  const parent = store.snapshot(parentId, { persist: false });
  const hit: string[] = [];
  const seen = new Set<string>([parentId]);
  for (const childId of Object.keys(parent.children)) {
    if (seen.has(childId)) continue;
    const c = childState(store, childId, parentId);
    if (!c) continue;
    seen.add(childId);
    if (!busyTree(store, c, MAX_WALK_DEPTH, seen, maxSessions)) continue;
    try {
      store.deliverUserEvent(childId, { type: 'user.interrupt', reason });
      hit.push(childId);
    } catch {
      // a child folder removed meanwhile has nothing to stop
    }
  }
  return hit;
}
