/**
 * The shapes SessionStore takes and gives (session-store.ts): what it needs
 * (StoreDeps, StoreOptions), what a session is created with, how an append
 * and a snapshot are asked for, and the lines a read returns.
 */
import type { Clock } from '../foundation/clock.js';
import type { Ids } from '../foundation/ids.js';
import type { Redactor } from '../foundation/redact.js';
import type { SessionOverrides } from '../schema/index.js';
import type { FsyncPolicy, SyncFd } from './durability.js';
import type { Cursor } from './jsonl.js';
import type { ParsedEventLine } from './parse-line.js';

export interface StoreDeps {
  clock: Clock;
  ids: Ids;
}

export interface StoreOptions {
  /** When appends are synced (default `run`, group commit; durability.ts). */
  fsync?: FsyncPolicy;
  /** fdatasync(2); tests pass one that counts. */
  syncFd?: SyncFd;
  /** Whether hosts share the home (person's events go through inbox/); default: judged (shared-home.ts). */
  shared?: boolean;
}

export interface CreateSessionInput {
  agentId: string;
  environmentId: string;
  title?: string | null;
  parentSessionId?: string | null;
  /** How deep below its root the session is (a child: its parent's + 1); absent or 0 for a root. */
  depth?: number;
  /** The tightest max_spawn_depth among the session's ancestors (delegation). */
  treeMaxDepth?: number;
  /** The tightest max_tree_sessions and max_spawns_per_minute among them. */
  treeMaxSessions?: number;
  treeMaxSpawnsPerMinute?: number;
  overrides?: SessionOverrides;
  /** Key-value pairs the caller attaches (schema/common.ts Metadata). */
  metadata?: Record<string, string>;
}

export interface AppendOptions {
  /** The run these events belong to; stamped as `wake_id`. */
  wakeId?: string;
  redactor?: Redactor;
  /**
   * Whether this append is a commit point, synced under `always` and `run`
   * (true), or one never synced (false). By default the policy decides: a
   * batch with a closing record, or written for a person (no wakeId), is a
   * commit point; a run's other lines are not.
   */
  durable?: boolean;
}

export interface SnapshotOptions {
  /** Write session.json back when the fold moved (default true; errors writing it are ignored). */
  persist?: boolean;
  /**
   * Pin provisional due times (hand-written `delay_seconds`) into the wake
   * queue, so they stop moving with the reader's clock. Only the runtime pins.
   */
  pin?: boolean;
}

/** Lines of the log read from a cursor (readEvents, follow). */
export interface EventLines {
  lines: ParsedEventLine[];
  /** Pass it back to read on from here. */
  cursor: Cursor;
  /** The file was replaced (or rewritten) since the cursor: `lines` start again at line 1. */
  reset: boolean;
}

/** SessionStore.readEvents's options. */
export interface ReadEventsOptions {
  /** At most this many lines (a reader that bounds its memory, e.g. the search indexer); the cursor stops after the last. */
  maxLines?: number;
  /**
   * Holds the pending events' read times once asked (a snapshot), for a
   * reader of many chunks in a row: without it each chunk holding a line
   * without created_at takes its own snapshot. The caller decides how long
   * the memo is fresh.
   */
  readTimes?: { pending?: Map<string, string> };
}
