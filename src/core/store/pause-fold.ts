/**
 * The fold's part of pause and resume (docs/context.md, "Pause and resume").
 *
 * A user.pause or user.resume takes effect where its line sits, like a
 * session.updated: no run has to take it in, so a pause holds even when no
 * run will come, and a run in progress sees it at its next step. Neither is
 * a pending event, with one exception: a resume after a run the pause cut
 * short (its session.run_paused) is pending, so that a run takes it in and
 * finishes the agent's turn even when nothing else waits.
 */
import type { SessionEvent, SessionSnapshot } from '../schema/index.js';

/**
 * Applies a user.pause or user.resume. True when the line is fully applied;
 * false for any other event, and for a resume a run must take in (pending,
 * as any user event).
 */
export function applyPauseLine(s: SessionSnapshot, e: SessionEvent): boolean {
  if (e.type === 'user.pause') {
    // Pausing a paused session changes nothing: the first pause (its time and reason) stands.
    if (!s.paused) s.paused = { event_id: e.id, since: e.created_at, reason: e.reason ?? null, cut_run: null };
    return true;
  }
  if (e.type === 'user.resume') {
    const cut = s.paused?.cut_run ?? null;
    s.paused = null;
    return cut === null;
  }
  return false;
}

/** A run stopped by a pause (session.run_paused): the resume will need a run to finish its turn. */
export function noteRunPaused(s: SessionSnapshot, e: Extract<SessionEvent, { type: 'session.run_paused' }>): void {
  if (s.paused && e.wake_id) s.paused = { ...s.paused, cut_run: e.wake_id };
}
