/**
 * A session's tree as spawn_session, a run's opening and `openboa status`
 * read it (docs/delegation.md): the line of ancestors above a session, the
 * first of them interrupted after a given time, and a census of the tree
 * below a root (sessions, recent spawns, refused spawns).
 *
 * Every read is a snapshot that is not written back (another process may
 * own the session). A session counts as a child only when its own log names
 * that parent, so a line that merely claims a child adds nothing; a session
 * that is gone or unreadable is left out.
 */
import type { SessionStore } from '../store/session-store.js';
import type { SessionSnapshot, SpawnRefusalReason } from '../schema/index.js';
import { MAX_WALK_SESSIONS } from './delegation-cascade.js';
import { iso } from '../foundation/clock.js';

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

/**
 * The first of `sessions` whose newest interrupt is later than `since`
 * (null `since`: any interrupt is), with that interrupt's time. An
 * interrupt dated after `nowMs` is not counted: its time is wrong (a
 * hand-written line, a clock set back since), and it would be later than
 * any work asked for until then, so the tree would refuse all of it. The
 * session still took that interrupt in, and its cascade still reached the
 * children it had.
 */
export function interruptedAfter(sessions: readonly SessionSnapshot[], since: string | null, nowMs: number): { session: SessionSnapshot; at: string } | null {
  const t = since === null ? -Infinity : Date.parse(since);
  for (const s of sessions) {
    if (s.last_interrupt_at === null) continue;
    const at = Date.parse(s.last_interrupt_at);
    if (at > t && at <= nowMs) return { session: s, at: s.last_interrupt_at };
  }
  return null;
}

/** What a walk of a tree found. */
export interface TreeCensus {
  root_session_id: string;
  /** Sessions found, the root included. */
  sessions: number;
  /** Children spawned at or after `since` (their parent's `session.thread_created`). */
  spawned_since: number;
  /** Refused spawns (session.spawn_refused) over the sessions whose children were read, and the latest. */
  spawns_refused: number;
  last_refusal: { session_id: string; reason: SpawnRefusalReason; message: string; at: string } | null;
  /** The walk stopped before it read the whole tree: a bound was reached. */
  partial: boolean;
}

export interface CensusOptions {
  /** ISO time from which spawns count in `spawned_since`. */
  since: string;
  /** Stop once this many sessions were found (a limit is reached: the rest need not be read). */
  stopAtSessions?: number;
  /** Stop once this many recent spawns were counted. */
  stopAtSpawns?: number;
}

/**
 * Walks the tree below `root`, breadth first, through each session's
 * `children` (what its own log tells of them), reading at most
 * MAX_WALK_SESSIONS sessions: as much as an interrupt's cascade reads, and
 * more than max_tree_sessions lets a tree hold.
 */
export function treeCensus(store: SessionStore, root: SessionSnapshot, o: CensusOptions): TreeCensus {
  const since = Date.parse(o.since);
  const c: TreeCensus = { root_session_id: root.id, sessions: 1, spawned_since: 0, spawns_refused: 0, last_refusal: null, partial: false };
  const maxSessions = Math.min(o.stopAtSessions ?? Infinity, MAX_WALK_SESSIONS);
  const seen = new Set([root.id]);
  const queue = [root];
  for (let i = 0; i < queue.length; i++) {
    const s = queue[i] as SessionSnapshot;
    c.spawns_refused += s.spawn_refusals.count;
    const last = s.spawn_refusals.last;
    if (last && (!c.last_refusal || Date.parse(last.at) > Date.parse(c.last_refusal.at))) c.last_refusal = { session_id: s.id, ...last };
    for (const [id, rec] of Object.entries(s.children)) {
      if (c.sessions >= maxSessions || c.spawned_since >= (o.stopAtSpawns ?? Infinity)) {
        c.partial = true;
        return c;
      }
      if (seen.has(id)) continue;
      const child = read(store, id);
      if (!child || child.parent_session_id !== s.id) continue;
      seen.add(id);
      c.sessions += 1;
      if (Date.parse(rec.created_at) >= since) c.spawned_since += 1;
      queue.push(child);
    }
  }
  return c;
}

/**
 * The census of the tree `s` belongs to, from its root (the topmost
 * ancestor that can be read), for `openboa status`; spawns count from
 * `windowMs` before `nowMs`. Null for a session with no parent and no children.
 */
export function treeOf(store: SessionStore, s: SessionSnapshot, nowMs: number, windowMs: number): TreeCensus | null {
  if (!s.parent_session_id && Object.keys(s.children).length === 0) return null;
  const root = ancestorsOf(store, s).at(-1) ?? s;
  return treeCensus(store, root, { since: iso(nowMs - windowMs) });
}
