/**
 * Watches `sessions/` for appends to events.jsonl and wake-queue.jsonl, for
 * files arriving in a session's inbox/ and for new session folders. An event
 * is only a hint that a session should be looked at again: the files decide.
 * Hints are coalesced per session until the next turn of the event loop.
 *
 * Natively (the default) the watching is FolderWatches: plain `fs.watch`,
 * one inotify watch on each session folder and one on its inbox/, raw and
 * unthrottled, and no per-file state. A folder's watch reports writes to the
 * files in it, so workspace/, runtime/ and our own session.json rewrites are
 * filtered by name and the daemon never wakes itself.
 *
 * `poll` (network filesystems, where inotify sees nothing) uses chokidar's
 * polling on the two journals and the inbox. chokidar drops a `change` that
 * follows another on the same file within 50 ms (a leading-edge throttle with
 * no trailing event), so there every hint is repeated once TRAILING_MS later.
 * Running out of inotify watches (ENOSPC) or descriptors (EMFILE) falls back
 * to polling with a warning instead of crashing: the native watches are all
 * closed first, and onReady is called again when polling is ready.
 */
import path from 'node:path';
import chokidar, { type FSWatcher } from 'chokidar';
import type { Clock } from '../core/foundation/clock.js';
import { UUID_V7 } from '../core/schema/index.js';
import { FolderWatches } from './folder-watches.js';

export interface WatcherOptions {
  sessionsDir: string;
  /** The trailing repeat of a hint runs on this clock. */
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
}

const WATCHED_FILES = new Set(['events.jsonl', 'wake-queue.jsonl']);
const INBOX = 'inbox';

/** Past chokidar's 50 ms change throttle (polling only). */
export const TRAILING_MS = 60;

export class SessionWatcher {
  private watcher: FSWatcher | FolderWatches | null = null;
  private polling: boolean;
  private closed = false;
  private readonly trailing = new Map<string, () => void>();
  private readonly pending = new Set<string>();
  private flushArmed = false;

  constructor(private readonly o: WatcherOptions) {
    this.polling = o.poll;
  }

  get mode(): 'native' | 'polling' {
    return this.polling ? 'polling' : 'native';
  }

  /** Decides from the path alone whether chokidar (polling) should look at it at all. */
  private ignored = (p: string): boolean => {
    const rel = path.relative(this.o.sessionsDir, p);
    if (rel === '') return false;
    if (rel.startsWith('..')) return true;
    const parts = rel.split(path.sep);
    if (!UUID_V7.test(parts[0] as string)) return true;
    if (parts.length === 1) return false;
    // inbox/ is a folder of its own: its watch reports files renamed into it.
    if (parts.length === 2 && parts[1] === INBOX) return false;
    if (parts.length === 2) return !WATCHED_FILES.has(parts[1] as string);
    if (parts.length === 3 && parts[1] === INBOX) return (parts[2] as string).startsWith('.');
    return true;
  };

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
    const w = chokidar.watch(this.o.sessionsDir, {
      ignoreInitial: true,
      depth: 2,
      persistent: true,
      ignored: this.ignored,
      usePolling: this.polling,
      interval: this.o.pollIntervalMs ?? 1000,
      binaryInterval: this.o.pollIntervalMs ?? 1000,
    });
    const idOf = (p: string) => path.relative(this.o.sessionsDir, p).split(path.sep)[0] as string;
    w.on('add', (p) => this.hint(idOf(p)));
    w.on('change', (p) => this.hint(idOf(p)));
    w.on('addDir', (p) => {
      if (p !== this.o.sessionsDir) this.hint(idOf(p));
    });
    w.on('unlinkDir', (p) => {
      if (path.dirname(p) === this.o.sessionsDir) this.o.onGone(idOf(p));
    });
    w.on('ready', () => this.o.onReady?.());
    w.on('error', (err) => this.onError(err as NodeJS.ErrnoException));
    this.watcher = w;
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

  /** Passes a hint on (coalesced), and once more after chokidar's throttle window. */
  private hint(id: string) {
    this.queue(id);
    if (this.trailing.has(id) || this.closed) return;
    const cancel = this.o.clock.setTimer(TRAILING_MS, () => {
      this.trailing.delete(id);
      if (!this.closed) this.queue(id);
    });
    this.trailing.set(id, cancel);
  }

  private onError(err: NodeJS.ErrnoException) {
    if (this.closed) return;
    if ((err.code === 'ENOSPC' || err.code === 'EMFILE') && !this.polling) {
      this.o.onWarn(
        `the watcher ran out of inotify watches (${err.code}); falling back to polling every ${(this.o.pollIntervalMs ?? 1000) / 1000} s. ` +
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
    for (const cancel of this.trailing.values()) cancel();
    this.trailing.clear();
    await this.watcher?.close();
    this.watcher = null;
  }
}
