/**
 * What stops spawn_session from making a child (docs/delegation.md, "Limits
 * over the tree"): the depth of the line, the session's own children, the
 * size of the whole tree, how many children the tree spawned in the last
 * minute, and an interrupt of this session or of one above it since the
 * run began. Each refusal is a reason code and the words the model reads.
 *
 * A limit binds the tree below the session whose agent set it: a child
 * records the tightest of its line's (session.created `tree_max_depth`,
 * `tree_max_sessions`, `tree_max_spawns_per_minute`), and its own spawns
 * are held to it, whatever its own agent says.
 *
 * The tree is counted at each spawn from its root (session-tree.ts), so
 * spawns racing in different sessions of one tree can pass the same count:
 * a tree can overshoot a limit by at most the spawns in flight at once
 * (one per run executing a spawn_session at that moment).
 */
import type { SessionStore } from '../store/session-store.js';
import type { Limits, SessionSnapshot, SpawnRefusalReason } from '../schema/index.js';
import { iso } from '../foundation/clock.js';
import { ancestorsOf, interruptedAfter, treeCensus } from './session-tree.js';

/** The window of limits.max_spawns_per_minute. */
export const SPAWN_RATE_WINDOW_MS = 60_000;

/** The limits that bind a session's spawns: the tightest of its agent's and its line's. */
export interface SpawnBounds {
  maxDepth: number;
  maxTreeSessions: number;
  maxSpawnsPerMinute: number;
}

export function spawnBounds(limits: Limits, me: SessionSnapshot): SpawnBounds {
  return {
    maxDepth: Math.min(limits.max_spawn_depth, me.tree_max_depth ?? Infinity),
    maxTreeSessions: Math.min(limits.max_tree_sessions, me.tree_max_sessions ?? Infinity),
    maxSpawnsPerMinute: Math.min(limits.max_spawns_per_minute, me.tree_max_spawns_per_minute ?? Infinity),
  };
}

export interface SpawnRefusal {
  reason: SpawnRefusalReason;
  /** What the model reads, after "not spawned: ". */
  why: string;
}

/**
 * Why work this run started may no longer reach other sessions: this
 * session, or one above it, was interrupted after `runOpenedAt` (the
 * interrupt is in its log, pending or taken in), and not after `nowMs`
 * (see interruptedAfter). Null when none was.
 */
export function interruptedSinceRun(store: SessionStore, me: SessionSnapshot, runOpenedAt: string, nowMs: number): string | null {
  const hit = interruptedAfter([me, ...ancestorsOf(store, me)], runOpenedAt, nowMs);
  return hit && interruptWords(me, hit);
}

function interruptWords(me: SessionSnapshot, hit: { session: SessionSnapshot; at: string }): string {
  const who = hit.session.id === me.id ? 'this session' : `the session ${hit.session.id} above this one`;
  return `${who} was interrupted at ${hit.at}, after this run began; nothing more goes out for the work it stopped`;
}

const ancestorOrAgent = (limit: string) => `(limits.${limit} of this agent or an ancestor's)`;

/** The first limit a new child of `me` would break, or null when it may be spawned now. */
export function spawnRefusal(store: SessionStore, me: SessionSnapshot, b: SpawnBounds, o: { runOpenedAt: string; nowMs: number; maxChildren: number }): SpawnRefusal | null {
  const depth = me.depth + 1;
  if (depth > b.maxDepth) return { reason: 'max_spawn_depth', why: `the child would be at depth ${depth}, over the limit of ${b.maxDepth} ${ancestorOrAgent('max_spawn_depth')}` };
  const count = Object.keys(me.children).length;
  if (count >= o.maxChildren) return { reason: 'max_children', why: `this session already has ${count} children, the limit is ${o.maxChildren} (limits.max_children); follow up with one of them with send_to_session` };
  const above = ancestorsOf(store, me);
  const hit = interruptedAfter([me, ...above], o.runOpenedAt, o.nowMs);
  if (hit) return { reason: 'interrupted', why: interruptWords(me, hit) };
  const root = above.at(-1) ?? me;
  const census = treeCensus(store, root, { since: iso(o.nowMs - SPAWN_RATE_WINDOW_MS), stopAtSessions: b.maxTreeSessions, stopAtSpawns: b.maxSpawnsPerMinute });
  if (census.sessions >= b.maxTreeSessions) {
    return { reason: 'max_tree_sessions', why: `the session tree of ${root.id} has ${census.sessions} sessions, the limit is ${b.maxTreeSessions} ${ancestorOrAgent('max_tree_sessions')}; do the work yourself or with the children you have` };
  }
  if (census.spawned_since >= b.maxSpawnsPerMinute) {
    return { reason: 'max_spawns_per_minute', why: `${census.spawned_since} sessions were spawned in the session tree of ${root.id} in the last minute, the limit is ${b.maxSpawnsPerMinute} ${ancestorOrAgent('max_spawns_per_minute')}; try again later, or do the work yourself` };
  }
  return null;
}
