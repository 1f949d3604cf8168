/**
 * Watches `sessions/` for appends to events.jsonl and wake-queue.jsonl, for
 * files arriving in a session's inbox/ and for new session folders. An event
 * is only a hint that a session should be looked at again: the files decide.
 * Hints are coalesced per session until the next turn of the event loop.
 *
 * Natively (the default) the watching is FolderWatches: plain `fs.watch`,
 * one inotify watch on each session folder and one on its inbox/ when it
 * has one (made on first use), raw and unthrottled, and no per-file state.
 * A folder's watch reports writes to the files in it, so workspace/,
 * runtime/ and our own session.json rewrites are filtered by name and the
 * daemon never wakes itself.
 *
 * `poll` (network filesystems, where inotify sees nothing another host
 * wrote) is two things: RingReader, one listing of the home's doorbell
 * (`sessions/.ring/`, rung by every delivery through inbox/) every 100 ms,
 * for latency; and PollWatches, per round one listing of `sessions/` and
 * three stats a session, every `pollIntervalMs` (default POLL_MAX_MS) or
 * longer when the rounds would cost more than their share of a core, for
 * writers that do not ring.
 * Running out of inotify watches (ENOSPC) or descriptors (EMFILE) falls back
 * to polling with a warning instead of crashing: the native watches are all
 * closed first, and onReady is called again when polling is ready.
 */
import type { Clock } from '../core/foundation/clock.js';
import { FolderWatches } from './folder-watches.js';
import { PollWatches, POLL_MAX_MS } from './poll-watches.js';
import { RingReader } from './ring-reader.js';

export interface WatcherOptions {
  sessionsDir: string;
  /** The polling rounds run on this clock. */
  clock: Pick<Clock, 'setTimer'>;
  poll: boolean;
  pollIntervalMs?: number;
  onHint: (sessionId: string) => void;
  onGone: (sessionId: string) => void;
  onWarn: (message: string) => void;
  onReady?: () => void;
  /**
   * Called when a hint arrives with none waiting to be passed on; the
   * function it returns is called once the hints have been passed on (the
   * daemon's BackgroundGate.hold: background work gives way meanwhile).
   */
  holdWhilePending?: () => () => void;
  /** Awaited between the slices of the native watches added at start (FolderWatches). */
  nextTurn?: () => Promise<void>;
  /** The sessions whose files are polled and whose doorbell entries are taken (`--shard`); default all. */
  owns?: (sessionId: string) => boolean;
  /** How often the doorbell is listed when polling (default RING_TICK_MS). */
  ringTickMs?: number;
}

export class SessionWatcher {
  private watcher: FolderWatches | PollWatches | null = null;
  private ring: RingReader | null = null;
  private polling: boolean;
  private closed = false;
  private readonly pending = new Set<string>();
  private flushArmed = false;

  constructor(private readonly o: WatcherOptions) {
    this.polling = o.poll;
  }

  get mode(): 'native' | 'polling' {
    return this.polling ? 'polling' : 'native';
  }

  /** The inotify watches held now (FolderWatches.watches); 0 while polling. */
  get watches(): number {
    return this.watcher instanceof FolderWatches ? this.watcher.watches : 0;
  }

  start(): void {
    if (!this.polling) {
      const w = new FolderWatches({ sessionsDir: this.o.sessionsDir, onHint: (id) => this.queue(id), onGone: (id) => this.o.onGone(id), ...(this.o.nextTurn ? { nextTurn: this.o.nextTurn } : {}) });
      // A watcher given up for polling may still have a 'ready' or 'error' on its way: only the current one speaks.
      w.on('ready', () => {
        if (this.watcher === w && !this.closed) this.o.onReady?.();
      });
      w.on('error', (err) => {
        if (this.watcher === w) this.onError(err as NodeJS.ErrnoException);
      });
      this.watcher = w;
      w.start();
      return;
    }
    const max = this.o.pollIntervalMs ?? POLL_MAX_MS;
    // The doorbell brings the latency, so a change found by a round does not make the rounds more frequent: at
    // scale that would poll every session four times a second while the home is busy.
    const w = new PollWatches({
      sessionsDir: this.o.sessionsDir,
      clock: this.o.clock,
      minMs: max,
      maxMs: max,
      onHint: (id) => this.queue(id),
      onGone: (id) => this.o.onGone(id),
      ...(this.o.owns ? { owns: this.o.owns } : {}),
      ...(this.o.nextTurn ? { nextTurn: this.o.nextTurn } : {}),
    });
    w.on('ready', () => {
      if (this.watcher === w && !this.closed) this.o.onReady?.();
    });
    w.on('error', (err) => {
      if (this.watcher === w) this.onError(err as NodeJS.ErrnoException);
    });
    this.watcher = w;
    w.start();
    this.ring = new RingReader({
      sessionsDir: this.o.sessionsDir,
      clock: this.o.clock,
      onHint: (id) => this.queue(id),
      onWarn: (m) => this.o.onWarn(m),
      ...(this.o.owns ? { owns: this.o.owns } : {}),
      ...(this.o.ringTickMs ? { tickMs: this.o.ringTickMs } : {}),
    });
    this.ring.start();
  }

  private queue(id: string) {
    this.pending.add(id);
    if (this.flushArmed) return;
    this.flushArmed = true;
    const release = this.o.holdWhilePending?.();
    setImmediate(() => {
      this.flushArmed = false;
      const ids = [...this.pending];
      this.pending.clear();
      try {
        if (!this.closed) for (const x of ids) this.o.onHint(x);
      } finally {
        release?.();
      }
    });
  }

  private onError(err: NodeJS.ErrnoException) {
    if (this.closed) return;
    if ((err.code === 'ENOSPC' || err.code === 'EMFILE') && !this.polling) {
      this.o.onWarn(
        `the watcher ran out of inotify watches (${err.code}); falling back to polling (at most every ${(this.o.pollIntervalMs ?? POLL_MAX_MS) / 1000} s). ` +
          'Raise fs.inotify.max_user_watches (sysctl) for millisecond latency.',
      );
      this.polling = true;
      // FolderWatches.close() ends every native watch (and any start still adding them) before it returns,
      // so the inotify watches are given back before polling begins.
      const native = this.watcher;
      this.watcher = null;
      void native?.close();
      this.start();
      return;
    }
    this.o.onWarn(`watcher error: ${err.message}`);
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.ring?.close();
    this.ring = null;
    await this.watcher?.close();
    this.watcher = null;
  }
}
