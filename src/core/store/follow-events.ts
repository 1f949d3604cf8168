/**
 * Following a session's log: its lines as they are appended, from a cursor
 * on, for `openboa events --follow` and any program that streams a session
 * (an HTTP server, an indexer). SessionStore.follow and .subscribe are the
 * doors; this module is how they work.
 *
 * Watch as a hint, read for the truth: a change in the session's folder
 * means "read again from the last cursor" (SessionStore.readEvents), and
 * the read decides what is new. So:
 * - the folder is watched, not the file: a log replaced by rename (or
 *   restored from a copy) is still seen, and the read then starts again at
 *   line 1 (`reset`). The sessions folder is watched too, for the session's
 *   own folder being replaced;
 * - an unfinished last line (no "\n" yet) is never delivered: the read
 *   stops before it, and it comes whole in a later batch;
 * - the watch is set up before the first read, so nothing appended in
 *   between is missed;
 * - a slow sweep reads again now and then through the injected clock (never
 *   a raw timer), for filesystems whose watch misses changes (network
 *   mounts) and for a watch that failed.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Clock } from '../foundation/clock.js';
import { START, type Cursor } from './jsonl.js';
import type { EventLines, SessionStore } from './session-store.js';

/**
 * How often a follower reads again without a watch event, ms. Local
 * filesystems report every change at once (the watch does the work); this
 * only bounds the delay where they do not, and costs one small read.
 */
export const FOLLOW_SWEEP_MS = 5000;

export interface FollowOptions {
  /**
   * Where to start: START (default) for the whole log, or a cursor from
   * readEvents, an earlier batch, or a snapshot's `journals.events` for only
   * what comes after it.
   */
  from?: Cursor;
  /** Ends the follow: the iteration finishes, subscribe() resolves. */
  signal?: AbortSignal;
  /** Period of the sweep, ms (default FOLLOW_SWEEP_MS); Infinity: none. */
  sweepMs?: number;
  /** Watch the folder (default true). false: rely on the sweep alone, e.g. where watching is not possible. */
  watch?: boolean;
}

/**
 * Batches of new lines, in log order, from `opts.from` on: first whatever
 * is already there, then each change. A batch is never empty, except one
 * that says the log was replaced (`reset`: its lines start again at line
 * 1). Each batch's `cursor` resumes after it. Ends when the signal aborts;
 * throws not_found when the session is gone, unsupported_log_format for a
 * log this code does not read.
 */
export async function* followEvents(store: SessionStore, sessionId: string, opts: FollowOptions = {}): AsyncGenerator<EventLines, void, void> {
  const sweepMs = opts.sweepMs ?? FOLLOW_SWEEP_MS;
  if (!(sweepMs > 0)) throw new Error(`followEvents: sweepMs must be a positive number of ms, got ${sweepMs}`);
  const dir = store.require(sessionId).dir;
  const hints = new Hints(dir, store.deps.clock, sweepMs, opts.signal, opts.watch !== false);
  let cursor = opts.from ?? START;
  try {
    while (!opts.signal?.aborted) {
      const batch = store.readEvents(sessionId, cursor);
      cursor = batch.cursor;
      if (batch.lines.length > 0 || batch.reset) yield batch;
      await hints.next();
    }
  } finally {
    hints.close();
  }
}

/**
 * followEvents with a callback: `onLines` gets each batch, in order, one at
 * a time (a promise it returns is awaited before the next batch, so a slow
 * consumer is never overrun). Resolves when the signal aborts; rejects with
 * what followEvents throws, or what `onLines` throws (which ends the follow).
 */
export async function subscribeEvents(store: SessionStore, sessionId: string, opts: FollowOptions, onLines: (batch: EventLines) => void | Promise<void>): Promise<void> {
  for await (const batch of followEvents(store, sessionId, opts)) await onLines(batch);
}

/**
 * "Something may have changed": set by the watchers; next() resolves at
 * once when it is set (clearing it), else at the next hint, sweep or abort.
 */
class Hints {
  private dirty = false;
  private wake: (() => void) | null = null;
  private session: fs.FSWatcher | null = null;
  private parent: fs.FSWatcher | null = null;
  private closed = false;

  constructor(
    private readonly dir: string,
    private readonly clock: Clock,
    private readonly sweepMs: number,
    private readonly signal: AbortSignal | undefined,
    private readonly watching: boolean,
  ) {
    if (!watching) return;
    this.watchSession();
    const name = path.basename(dir);
    // The session's folder itself renamed away or replaced: watch the new one.
    this.parent = this.watch(path.dirname(dir), (file) => {
      if (file !== null && file !== name) return;
      this.watchSession();
      this.hint();
    });
  }

  private hint = () => {
    this.dirty = true;
    const wake = this.wake;
    this.wake = null;
    wake?.();
  };

  /** fs.watch that never throws: a watcher that cannot start or fails is dropped (the sweep covers it). */
  private watch(target: string, onChange: (file: string | null) => void): fs.FSWatcher | null {
    try {
      const w = fs.watch(target, { persistent: true }, (_event, file) => onChange(file === null ? null : String(file)));
      w.on('error', () => {
        w.close();
        if (this.session === w) this.session = null;
        if (this.parent === w) this.parent = null;
        this.hint();
      });
      return w;
    } catch {
      return null;
    }
  }

  private watchSession() {
    if (this.closed) return;
    this.session?.close();
    // Only the log matters: session.json and runtime/ change on every fold and run.
    this.session = this.watch(this.dir, (file) => {
      if (file === null || file === 'events.jsonl') this.hint();
    });
  }

  next(): Promise<void> {
    if (this.dirty || this.signal?.aborted) {
      this.dirty = false;
      return Promise.resolve();
    }
    if (this.watching && !this.session) this.watchSession(); // a watch that failed is tried again
    return new Promise((resolve) => {
      const cancel = Number.isFinite(this.sweepMs) ? this.clock.setTimer(this.sweepMs, () => finish()) : () => {};
      const finish = () => {
        cancel();
        this.signal?.removeEventListener('abort', finish);
        this.wake = null;
        this.dirty = false;
        resolve();
      };
      this.signal?.addEventListener('abort', finish, { once: true });
      this.wake = finish;
    });
  }

  close() {
    this.closed = true;
    this.session?.close();
    this.parent?.close();
    this.session = this.parent = null;
    this.wake?.();
  }
}
