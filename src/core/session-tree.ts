/**
 * A session's tree as spawn_session and a run's opening read it
 * (docs/delegation.md): the line of ancestors above a session, and the
 * first of them interrupted after a given time.
 *
 * Every read is a snapshot that is not written back (another process may
 * own the session); a session that is gone or unreadable is left out.
 */
import type { SessionStore } from './store/session-store.js';
import type { SessionSnapshot } from './schema/index.js';

/** Ancestors walked at most: the deepest tree limits.max_spawn_depth allows (a loop in a hand-edited log must not hang a run). */
const MAX_DEPTH = 64;

function read(store: SessionStore, id: string): SessionSnapshot | null {
  try {
    return store.exists(id) ? store.snapshot(id, { persist: false }) : null;
  } catch {
    return null;
  }
}

/** The sessions above `s`, its parent first, up to the topmost that can be read (at most 64). */
export function ancestorsOf(store: SessionStore, s: SessionSnapshot): SessionSnapshot[] {
  const out: SessionSnapshot[] = [];
  const seen = new Set([s.id]);
  for (let id = s.parent_session_id; id && !seen.has(id) && out.length < MAX_DEPTH; ) {
    seen.add(id);
    const a = read(store, id);
    if (!a) break;
    out.push(a);
    id = a.parent_session_id;
  }
  return out;
}

/** The first of `sessions` whose newest interrupt is later than `since` (null `since`: any interrupt is), with that interrupt's time. */
export function interruptedAfter(sessions: readonly SessionSnapshot[], since: string | null): { session: SessionSnapshot; at: string } | null {
  const t = since === null ? -Infinity : Date.parse(since);
  for (const s of sessions) {
    if (s.last_interrupt_at !== null && Date.parse(s.last_interrupt_at) > t) return { session: s, at: s.last_interrupt_at };
  }
  return null;
}
