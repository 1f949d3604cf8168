/**
 * When the store's writes are made to survive a power loss (fsync).
 *
 * A killed process loses nothing that write(2) returned for: the page cache
 * belongs to the kernel. fsync only matters when the kernel itself goes
 * (power loss, kernel crash), and it is the store's main cost. The policy:
 *
 * - `always`: every append is synced before it returns.
 * - `run` (default): group commit. A run's own lines are written without a
 *   sync; the commit points are synced: the run's closing record
 *   (status_idle / status_rescheduled / status_terminated), a reply asking
 *   for tools (before they run), every wake-queue record, every event
 *   written for a person (no run id: `openboa send`, interrupt, tool
 *   results), and session creation.
 * - `never`: nothing the store appends is synced (tests, throwaway homes).
 *
 * Invariant (always, run): a commit point is synced only after every earlier
 * unsynced append of the same session (to either journal), so whatever a
 * power loss keeps is a prefix of what this store wrote: a wake.consumed
 * never survives the status_running that took it. session.json is not
 * written while the session has unsynced appends, so its cursors never
 * count lines a power loss could take away (a cursor past the end still
 * rebuilds: jsonl.readLines `reset`).
 *
 * Not covered here: the inbox move (inbox.ts) and the run key (run-key.ts)
 * always sync, whatever the policy; they delete or create what nothing
 * else can rebuild.
 */
import fs from 'node:fs';
import { appendLines } from './jsonl.js';

export const FSYNC_POLICIES = ['always', 'run', 'never'] as const;
export type FsyncPolicy = (typeof FSYNC_POLICIES)[number];
/** Group commit: a power loss may take the unfinished run's lines, never a finished run, a tool call or a person's event. */
export const DEFAULT_FSYNC: FsyncPolicy = 'run';

/** Checks a policy given as text (an option, a config value): "expected X, got Y". */
export function parseFsyncPolicy(value: string, where: string): FsyncPolicy {
  if ((FSYNC_POLICIES as readonly string[]).includes(value)) return value as FsyncPolicy;
  throw new Error(`${where}: expected one of ${FSYNC_POLICIES.join(', ')}, got "${value}"`);
}

/** fdatasync(2) of an open file or directory; the seam tests count through. */
export type SyncFd = (fd: number) => void;

export class Durability {
  /** Journals this store appended to without a sync since their last sync. */
  private readonly dirty = new Set<string>();

  constructor(
    readonly policy: FsyncPolicy = DEFAULT_FSYNC,
    private readonly syncFd: SyncFd = fs.fdatasyncSync,
  ) {
    parseFsyncPolicy(policy, 'fsync policy');
  }

  /**
   * Appends `lines` to `file` (one write). `commit`: whether this append is
   * a commit point (see the module comment). `session`: the session's
   * journals, any of which is synced first if an earlier append left it
   * unsynced.
   */
  append(file: string, lines: readonly string[], commit: boolean, session: readonly string[]): void {
    const sync = this.policy === 'always' || (this.policy === 'run' && commit);
    if (sync) for (const f of session) if (f !== file && this.dirty.has(f)) this.syncPath(f);
    appendLines(file, lines, sync ? { sync: this.syncFd } : {});
    if (sync) this.dirty.delete(file);
    else if (this.policy === 'run' && lines.length > 0) this.dirty.add(file);
  }

  /** Whether any of `files` has appends a power loss could still take. */
  pending(files: readonly string[]): boolean {
    return files.some((f) => this.dirty.has(f));
  }

  /** Syncs a directory after a create or rename in it (not under `never`). */
  syncDir(dir: string): void {
    if (this.policy === 'never') return;
    this.syncPath(dir, true);
  }

  private syncPath(p: string, isDir = false): void {
    let fd: number | undefined;
    try {
      fd = fs.openSync(p, 'r');
      this.syncFd(fd);
    } catch (e) {
      // Some filesystems refuse to sync a directory; a journal that is gone has nothing left to sync.
      const code = (e as NodeJS.ErrnoException).code;
      if (!(isDir && (code === 'EINVAL' || code === 'ENOTSUP')) && code !== 'ENOENT') throw e;
    } finally {
      if (fd !== undefined) fs.closeSync(fd);
    }
    if (!isDir) this.dirty.delete(p);
  }
}

/**
 * The run's records that are commit points under `run`: its closing record
 * (the end of its lines), and a reply asking for tools, synced before the
 * tools run, so a power loss never loses the record that a tool was called
 * (it is then reported as "outcome unknown", never run a second time).
 */
export const COMMITS: ReadonlySet<string> = new Set(['session.status_idle', 'session.status_rescheduled', 'session.status_terminated', 'agent.tool_use', 'agent.custom_tool_use', 'agent.mcp_tool_use']);
