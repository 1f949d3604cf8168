/**
 * Watches `sessions/` with chokidar (native inotify by default) for appends
 * to events.jsonl and wake-queue.jsonl and for new session folders. An event
 * is only a hint that a session should be looked at again: the files decide
 * (chokidar coalesces bursts of appends into a few events, which is fine).
 *
 * Only depth 1 is watched, and workspace/, runtime/, locks and our own
 * session.json rewrites are ignored, so one inotify watch per session folder
 * suffices and the daemon never wakes itself. `poll` switches chokidar to
 * polling (network filesystems); running out of inotify watches (ENOSPC)
 * falls back to polling with a warning instead of crashing.
 */
import path from 'node:path';
import chokidar, { type FSWatcher } from 'chokidar';
import { UUID_V7 } from '../core/schema/index.js';

export interface WatcherOptions {
  sessionsDir: string;
  poll: boolean;
  pollIntervalMs?: number;
  onHint: (sessionId: string) => void;
  onGone: (sessionId: string) => void;
  onWarn: (message: string) => void;
  onReady?: () => void;
}

const WATCHED_FILES = new Set(['events.jsonl', 'wake-queue.jsonl']);

export class SessionWatcher {
  private watcher: FSWatcher | null = null;
  private polling: boolean;
  private closed = false;

  constructor(private readonly o: WatcherOptions) {
    this.polling = o.poll;
  }

  get mode(): 'native' | 'polling' {
    return this.polling ? 'polling' : 'native';
  }

  /** Decides from the path alone whether chokidar should look at it at all. */
  private ignored = (p: string): boolean => {
    const rel = path.relative(this.o.sessionsDir, p);
    if (rel === '') return false;
    if (rel.startsWith('..')) return true;
    const parts = rel.split(path.sep);
    if (!UUID_V7.test(parts[0] as string)) return true;
    if (parts.length === 1) return false;
    if (parts.length === 2) return !WATCHED_FILES.has(parts[1] as string);
    return true;
  };

  start(): void {
    const w = chokidar.watch(this.o.sessionsDir, {
      ignoreInitial: true,
      depth: 1,
      persistent: true,
      ignored: this.ignored,
      usePolling: this.polling,
      interval: this.o.pollIntervalMs ?? 1000,
      binaryInterval: this.o.pollIntervalMs ?? 1000,
    });
    const idOf = (p: string) => path.relative(this.o.sessionsDir, p).split(path.sep)[0] as string;
    w.on('add', (p) => this.o.onHint(idOf(p)));
    w.on('change', (p) => this.o.onHint(idOf(p)));
    w.on('addDir', (p) => {
      if (p !== this.o.sessionsDir) this.o.onHint(idOf(p));
    });
    w.on('unlinkDir', (p) => {
      if (path.dirname(p) === this.o.sessionsDir) this.o.onGone(idOf(p));
    });
    w.on('ready', () => this.o.onReady?.());
    w.on('error', (err) => this.onError(err as NodeJS.ErrnoException));
    this.watcher = w;
  }

  private onError(err: NodeJS.ErrnoException) {
    if (this.closed) return;
    if ((err.code === 'ENOSPC' || err.code === 'EMFILE') && !this.polling) {
      this.o.onWarn(
        `the watcher ran out of inotify watches (${err.code}); falling back to polling every ${(this.o.pollIntervalMs ?? 1000) / 1000} s. ` +
          'Raise fs.inotify.max_user_watches (sysctl) for millisecond latency.',
      );
      this.polling = true;
      void this.watcher?.close();
      this.start();
      return;
    }
    this.o.onWarn(`watcher error: ${err.message}`);
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.watcher?.close();
    this.watcher = null;
  }
}
