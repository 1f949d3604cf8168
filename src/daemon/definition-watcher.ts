/**
 * Watches `agents/` and `environments/` for changes to definitions. A session
 * whose run failed because its agent or environment did not load backs off
 * (2 s doubling to 5 min); when a person fixes the file, it should run at
 * once, not after the backoff. Like the session watcher, an event is only a
 * hint: the daemon retries the sessions its definitions held back, and the
 * run decides whether the definitions load now.
 *
 * What is watched is an allow-list of where definitions live (definitionPath):
 * the files of `agents/<id>/` and `agents/<id>/skills/<name>/`, and the files
 * of `environments/`. Every other folder is never watched, above all an
 * agent's `memory/`, which its sandbox can write: a shell there renaming a
 * directory in a loop makes inotify events faster than one thread can take
 * them, and libuv reads an inotify descriptor until it is empty, so a watch
 * there held the daemon's whole event loop (every session) for as long as
 * the loop ran. The runtime's own folders (`memory.versions/`, ...) are not
 * definitions either.
 */
import path from 'node:path';
import type { Stats } from 'node:fs';
import chokidar, { type FSWatcher } from 'chokidar';

export interface DefinitionWatcherOptions {
  /** The agents folder (agents/); watched once it appears. */
  agentsDir: string;
  /** The environments folder (environments/); watched once it appears. */
  environmentsDir: string;
  poll: boolean;
  pollIntervalMs?: number;
  /** Called once per burst of changes (coalesced until the next turn of the event loop). */
  onChange: () => void;
  onWarn: (message: string) => void;
  onReady?: () => void;
}

/**
 * Whether `p` may hold a definition, and so may be watched. Folders count
 * by their path alone (and a folder above a root, so a root made later is
 * seen); at `agents/<id>/<name>` only `skills` is a folder
 * worth entering, which needs the entry's stats (chokidar asks again with
 * them before it watches anything).
 */
export function definitionPath(p: string, stats: Stats | undefined, o: { agentsDir: string; environmentsDir: string }): boolean {
  const under = (root: string) => {
    const rel = path.relative(root, p);
    return rel === '' ? [] : rel.startsWith('..') || path.isAbsolute(rel) ? null : rel.split(path.sep);
  };
  // A folder above either (chokidar watches the parent of a root that does not exist yet, for that root only).
  if ([o.agentsDir, o.environmentsDir].some((root) => root.startsWith(p.endsWith(path.sep) ? p : p + path.sep))) return true;
  const env = under(o.environmentsDir);
  // environments/<id>.yaml: the folder and its files, no folder below it.
  if (env) return env.length === 0 || (env.length === 1 && !stats?.isDirectory());
  const parts = under(o.agentsDir);
  if (!parts) return false;
  // agents/ and agents/<id>/
  if (parts.length <= 1) return true;
  // agents/<id>/agent.yaml, AGENTS.md, script.yaml (any file), and the skills/ folder; no other folder.
  if (parts.length === 2) return parts[1] === 'skills' || !stats?.isDirectory();
  // agents/<id>/skills/<name>/ and agents/<id>/skills/<name>/SKILL.md
  return parts[1] === 'skills' && (parts.length === 3 || (parts.length === 4 && !stats?.isDirectory()));
}

export class DefinitionWatcher {
  private watcher: FSWatcher | null = null;
  private armed = false;
  private closed = false;

  constructor(private readonly o: DefinitionWatcherOptions) {}

  start(): void {
    const roots = { agentsDir: this.o.agentsDir, environmentsDir: this.o.environmentsDir };
    const w = chokidar.watch([this.o.agentsDir, this.o.environmentsDir], {
      ignoreInitial: true,
      // agents/<id>/skills/<name>/SKILL.md is the deepest definition; definitionPath narrows it further.
      depth: 3,
      ignored: (p: string, stats?: Stats) => !definitionPath(p, stats, roots),
      persistent: true,
      usePolling: this.o.poll,
      interval: this.o.pollIntervalMs ?? 1000,
    });
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
