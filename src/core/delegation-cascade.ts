/**
 * Interrupts cascade down a session tree (docs/delegation.md). When a run
 * takes in an interrupt, each child that is running, backing off, waiting
 * for a person or has work queued gets a `user.interrupt` line appended to
 * its log: the same ingress a person would use. Its own run, taking that
 * in, does the same for its children, so the whole tree below stops.
 */
import type { SessionStore } from './store/session-store.js';
import { openActions } from './store/answer-problem.js';

/** Appends a user.interrupt to every child of `parentId` that has something to stop; returns their ids. */
export function cascadeInterrupt(store: SessionStore, parentId: string, reason: string): string[] {
  const parent = store.snapshot(parentId, { persist: false });
  const hit: string[] = [];
  for (const childId of Object.keys(parent.children)) {
    try {
      const c = store.snapshot(childId, { persist: false });
      // Only a session whose own log names this parent: a hand-written line cannot point the cascade elsewhere.
      if (c.parent_session_id !== parentId) continue;
      const busy = c.status === 'running' || c.status === 'rescheduling' || openActions(c).length > 0 || c.pending_events.some((p) => p.type !== 'user.interrupt') || c.pending_wakes.length > 0;
      if (!busy || c.status === 'terminated') continue;
      store.appendUserEvent(childId, { type: 'user.interrupt', reason });
      hit.push(childId);
    } catch {
      // a child folder that is gone has nothing to stop
    }
  }
  return hit;
}
