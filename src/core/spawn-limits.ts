/**
 * What stops spawn_session from making a child (docs/delegation.md, "Limits
 * over the tree" and "Stopping a tree that is still spawning"): the depth
 * of the line, the session's own children, and an interrupt of this
 * session or of one above it since the run began. Each refusal is a reason
 * code and the words the model reads.
 *
 * A depth limit binds the tree below the session whose agent set it: a
 * child records the tightest of its line's (session.created
 * `tree_max_depth`), and its own spawns are held to it, whatever its own
 * agent says.
 */
import type { SessionStore } from './store/session-store.js';
import type { Limits, SessionSnapshot, SpawnRefusalReason } from './schema/index.js';
import { ancestorsOf, interruptedAfter } from './session-tree.js';

/** The limits that bind a session's spawns: the tightest of its agent's and its line's. */
export interface SpawnBounds {
  maxDepth: number;
}

export function spawnBounds(limits: Limits, me: SessionSnapshot): SpawnBounds {
  return { maxDepth: Math.min(limits.max_spawn_depth, me.tree_max_depth ?? Infinity) };
}

export interface SpawnRefusal {
  reason: SpawnRefusalReason;
  /** What the model reads, after "not spawned: ". */
  why: string;
}

/**
 * Why work this run started may no longer reach other sessions: this
 * session, or one above it, was interrupted after `runOpenedAt` (the
 * interrupt is in its log, pending or taken in). Null when none was.
 */
export function interruptedSinceRun(store: SessionStore, me: SessionSnapshot, runOpenedAt: string): string | null {
  const hit = interruptedAfter([me, ...ancestorsOf(store, me)], runOpenedAt);
  return hit && interruptWords(me, hit);
}

function interruptWords(me: SessionSnapshot, hit: { session: SessionSnapshot; at: string }): string {
  const who = hit.session.id === me.id ? 'this session' : `the session ${hit.session.id} above this one`;
  return `${who} was interrupted at ${hit.at}, after this run began; nothing more goes out for the work it stopped`;
}

/** The first limit a new child of `me` would break, or null when it may be spawned now. */
export function spawnRefusal(store: SessionStore, me: SessionSnapshot, b: SpawnBounds, o: { runOpenedAt: string; maxChildren: number }): SpawnRefusal | null {
  const depth = me.depth + 1;
  if (depth > b.maxDepth) return { reason: 'max_spawn_depth', why: `the child would be at depth ${depth}, over the limit of ${b.maxDepth} (limits.max_spawn_depth of this agent or an ancestor's)` };
  const count = Object.keys(me.children).length;
  if (count >= o.maxChildren) return { reason: 'max_children', why: `this session already has ${count} children, the limit is ${o.maxChildren} (limits.max_children); follow up with one of them with send_to_session` };
  const interrupted = interruptedSinceRun(store, me, o.runOpenedAt);
  if (interrupted) return { reason: 'interrupted', why: interrupted };
  return null;
}
