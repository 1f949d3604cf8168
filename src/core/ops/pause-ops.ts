/**
 * Pausing and resuming a session (docs/context.md, "Pause and resume"): the
 * core of `openboa pause` and `openboa resume`. Each appends its line
 * whatever the state (the fold makes a second pause, or a resume of a
 * session that is not paused, change nothing) and says in a note when it
 * changed nothing, or what waits.
 */
import type { SessionStore } from '../store/session-store.js';
import type { SessionEvent } from '../schema/index.js';

export interface PauseResult {
  event: SessionEvent;
  /** What it changed, in words, when it is not the plain case (already paused, not paused, what waits). */
  notes: string[];
}

/** Appends a user.pause: no run starts until a resume (an interrupt is still honoured). */
export function pauseSession(store: SessionStore, sessionId: string, reason?: string): PauseResult {
  const before = store.snapshot(sessionId).paused;
  const event = store.deliverUserEvent(sessionId, { type: 'user.pause', ...(reason ? { reason } : {}) });
  const notes: string[] = [];
  if (before) notes.push(`session ${sessionId} was already paused (since ${before.since}${before.reason ? `: ${before.reason}` : ''}); nothing changed`);
  else {
    const s = store.snapshot(sessionId);
    if (s.status === 'running') notes.push(`session ${sessionId} has a run in progress: it stops at its next step (a tool that is running finishes first)`);
  }
  return { event, notes };
}

/** Appends a user.resume: what waited (messages, answers, due revisits) is taken in by the next run. */
export function resumeSession(store: SessionStore, sessionId: string): PauseResult {
  const before = store.snapshot(sessionId).paused;
  const event = store.deliverUserEvent(sessionId, { type: 'user.resume' });
  const notes: string[] = [];
  if (!before) notes.push(`session ${sessionId} was not paused; nothing changed`);
  return { event, notes };
}
