/**
 * Watches `agents/` and `environments/` for changes to definitions. A session
 * whose run failed because its agent or environment did not load backs off
 * (2 s doubling to 5 min); when a person fixes the file, it should run at
 * once, not after the backoff. Like the session watcher, an event is only a
 * hint: the daemon retries the sessions its definitions held back, and the
 * run decides whether the definitions load now.
 */
import chokidar, { type FSWatcher } from 'chokidar';

export interface DefinitionWatcherOptions {
  /** The folders to watch (agents/, environments/); missing ones are watched once they appear. */
  dirs: string[];
  poll: boolean;
  pollIntervalMs?: number;
  /** Called once per burst of changes (coalesced until the next turn of the event loop). */
  onChange: () => void;
  onWarn: (message: string) => void;
  onReady?: () => void;
}

export class DefinitionWatcher {
  private watcher: FSWatcher | null = null;
  private armed = false;
  private closed = false;

  constructor(private readonly o: DefinitionWatcherOptions) {}

  start(): void {
    // agents/<id>/agent.yaml, AGENTS.md, script.yaml and skills/<name>/SKILL.md: depth 3 covers them all.
    const w = chokidar.watch(this.o.dirs, { ignoreInitial: true, depth: 3, persistent: true, usePolling: this.o.poll, interval: this.o.pollIntervalMs ?? 1000 });
    const hint = () => {
      if (this.armed || this.closed) return;
      this.armed = true;
      setImmediate(() => {
        this.armed = false;
        if (!this.closed) this.o.onChange();
      });
    };
    w.on('add', hint).on('change', hint).on('unlink', hint).on('addDir', hint);
    w.on('error', (e) => this.o.onWarn(`definition watcher: ${(e as Error).message}`));
    w.on('ready', () => this.o.onReady?.());
    this.watcher = w;
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.watcher?.close();
    this.watcher = null;
  }
}
