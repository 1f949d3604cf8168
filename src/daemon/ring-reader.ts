/**
 * The reading side of the home's doorbell (core/store/ring.ts): with
 * `--poll`, every `tickMs` (100 ms) one listing of `sessions/.ring/`, and
 * for each entry of this daemon's share: remove it, then hint its session.
 * So a person's event delivered from another host is looked at within a
 * tick, while the full polling round over every session (poll-watches.ts)
 * can stay slow.
 *
 * Contracts:
 * - Remove, then hint: the sender rings after its inbox rename, so a look
 *   that follows the removal sees every event rung before it. An entry
 *   another daemon removed first (ENOENT) is that daemon's to hint.
 * - Each session hinted is hinted once more `recheckMs` later: on a mount
 *   that caches listings (sshfs dcache_timeout, NFS actimeo), a look at its
 *   inbox/ just after this daemon's own last look there (its start scan, a
 *   run that just ended) is served from the cache and misses the new file.
 *   A look that finds nothing costs a listing of one inbox/.
 * - `owns(id)` false: the entry is left for the daemon whose shard holds
 *   the session (its own hint would be ignored here: daemon.ts evaluate).
 * - An entry whose name is no session id (not UTF-8 included: names are
 *   read, compared and removed as the folder's bytes), or names no session
 *   folder, is removed and not hinted. One that cannot be removed (a folder
 *   with files in it) is hinted once, reported once (the entries a tick
 *   finds so in one notice), and then left alone for as long as it is
 *   listed: remembered by name, so what is remembered never outgrows the
 *   folder's own listing.
 * - At most `perTick` entries are taken per tick; more waiting are taken on
 *   the next turn of the event loop, not after a whole tick, when this tick
 *   made progress (removed an entry, or found one it cannot remove). So no
 *   entry the reader cannot remove keeps it listing on every turn.
 * - The folder is opened without following a symlink, and every entry is
 *   removed within that open folder: a `.ring` that is a symlink or not a
 *   folder is never read through (reported once, and again only after it
 *   was fine meanwhile), and nothing outside it is ever removed. A missing
 *   folder is normal: nobody has rung yet.
 * - Never throws, never stops: a failed tick is reported and the next one
 *   comes. close() stops the ticks; no hint after it.
 *
 * Cost per tick with nothing rung: an open, a listing and a close of one
 * folder, asynchronous (the thread pool's), so a slow file server never
 * holds the event loop.
 */
import fsp from 'node:fs/promises';
import path from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Clock } from '../core/foundation/clock.js';
import { UUID_V7 } from '../core/schema/index.js';
import { RING_DIR } from '../core/store/ring.js';
import { DIR_FLAGS, fdPath } from '../core/sandbox/beneath.js';
import { rawAt, walkName } from '../core/sandbox/dir-entries.js';

export interface RingReaderOptions {
  sessionsDir: string;
  clock: Pick<Clock, 'setTimer'>;
  onHint: (sessionId: string) => void;
  onWarn: (message: string) => void;
  /** The sessions whose entries this daemon takes (`--shard`; default all). */
  owns?: (sessionId: string) => boolean;
  /** How often the folder is listed (default RING_TICK_MS). */
  tickMs?: number;
  /** Entries taken per tick (default RING_PER_TICK). */
  perTick?: number;
  /** When a hinted session is hinted again (default RING_RECHECK_MS). */
  recheckMs?: number;
}

/** 100 ms: well under the 300 ms a message may take from another host to its run (issue 32), for one listing. */
export const RING_TICK_MS = 100;
/** Each entry taken costs a removal and a stat: a burst of thousands is taken a few hundred a turn. */
export const RING_PER_TICK = 256;
/**
 * Longer than a mount's listing cache can hide a new file: sshfs with
 * dcache_timeout=1 keeps one up to 2 s (its timeout counts whole seconds),
 * NFS with actimeo=1 about 1 s.
 */
export const RING_RECHECK_MS = 2500;
type Removal = 'removed' | 'gone' | { stuck: string };

/**
 * A listed name as a string key: latin1 reads each byte as one character,
 * so distinct names are distinct keys whatever their bytes, and a session id
 * (ASCII) reads as itself.
 */
const keyOf = (raw: Buffer): string => raw.toString('latin1');

export class RingReader {
  private closed = false;
  private cancel: (() => void) | null = null;
  /** What was wrong with the folder at the last failure to open it, reported once until it is fine or wrong otherwise. */
  private failing: string | null = null;
  /** Entries that cannot be removed (keyOf), so they are not hinted or tried every tick; only those still listed. */
  private readonly stuck = new Set<string>();
  /** The timers of the second hints, one per tick that hinted. */
  private readonly rechecks = new Set<() => void>();
  /** Ticks done (tests, benchmarks). */
  ticks = 0;

  constructor(private readonly o: RingReaderOptions) {}

  get dir(): string {
    return path.join(this.o.sessionsDir, RING_DIR);
  }

  start(): void {
    this.arm(this.o.tickMs ?? RING_TICK_MS);
  }

  private arm(ms: number) {
    if (this.closed) return;
    this.cancel = this.o.clock.setTimer(ms, () => void this.tick());
  }

  /** One listing, and what it names (see the module comment). Exposed for tests. */
  async tick(): Promise<void> {
    if (this.closed) return;
    let more = false;
    try {
      more = await this.read();
    } catch (e) {
      this.o.onWarn(`the doorbell ${this.dir}: ${(e as Error).message}`);
    }
    this.ticks += 1;
    if (!more) return this.arm(this.o.tickMs ?? RING_TICK_MS);
    await nextTurn();
    if (!this.closed) void this.tick();
  }

  /** Returns whether entries were left for the next turn and this tick made progress (see the module comment). */
  private async read(): Promise<boolean> {
    let dir: fsp.FileHandle;
    try {
      dir = await fsp.open(this.dir, DIR_FLAGS);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code ?? 'error';
      if (code === 'ENOENT') {
        this.failing = null;
        return false;
      }
      // O_NOFOLLOW with O_DIRECTORY refuses a symlink with ENOTDIR or ELOOP: which it was is only for the message.
      const link = await fsp.lstat(this.dir).then((st) => st.isSymbolicLink(), () => false);
      const what = link ? 'is a symlink' : code === 'ENOTDIR' ? 'is not a folder' : `cannot be opened (${code})`;
      if (this.failing !== what) {
        this.failing = what;
        this.o.onWarn(`the doorbell ${this.dir} ${what}: it is not read, and messages from other hosts wait for the polling round; remove it (openboa makes it again)`);
      }
      return false;
    }
    this.failing = null;
    try {
      const names = await fsp.readdir(fdPath(dir.fd), { encoding: 'buffer' });
      if (this.stuck.size) {
        const listed = new Set(names.map(keyOf));
        for (const k of this.stuck) if (!listed.has(k)) this.stuck.delete(k);
      }
      let taken = 0;
      let progress = false;
      const hinted: string[] = [];
      const stuckNow: Array<{ name: Buffer; code: string }> = [];
      try {
        for (const raw of names) {
          if (this.closed) return false;
          const key = keyOf(raw);
          if (this.stuck.has(key)) continue;
          const id = UUID_V7.test(key) ? key : null;
          if (id !== null && this.o.owns && !this.o.owns(id)) continue;
          if (taken >= (this.o.perTick ?? RING_PER_TICK)) return progress;
          taken += 1;
          const removal = await this.remove(dir.fd, raw);
          if (removal !== 'gone') progress = true;
          if (typeof removal === 'object') {
            this.stuck.add(key);
            stuckNow.push({ name: raw, code: removal.stuck });
          }
          if (removal === 'gone' || id === null) continue;
          if (!(await isDir(path.join(this.o.sessionsDir, id)))) continue;
          if (this.closed) return false;
          this.o.onHint(id);
          hinted.push(id);
        }
        return false;
      } finally {
        if (hinted.length && !this.closed) this.recheck(hinted);
        if (stuckNow.length) this.reportStuck(stuckNow);
      }
    } finally {
      await dir.close();
    }
  }

  private recheck(ids: string[]) {
    const cancel = this.o.clock.setTimer(this.o.recheckMs ?? RING_RECHECK_MS, () => {
      this.rechecks.delete(cancel);
      if (!this.closed) for (const id of ids) this.o.onHint(id);
    });
    this.rechecks.add(cancel);
  }

  /** One notice for the entries a tick found it cannot remove. */
  private reportStuck(found: ReadonlyArray<{ name: Buffer; code: string }>) {
    const first = found[0]!;
    const codes = [...new Set(found.map((f) => f.code))].join(', ');
    const more = found.length > 1 ? ` and ${found.length - 1} more entries` : '';
    this.o.onWarn(`the doorbell's entry ${path.join(this.dir, walkName(first.name))}${more} cannot be removed (${codes}): ${found.length > 1 ? 'they are' : 'it is'} left, and no longer read`);
  }

  /** Removes one listed entry by its bytes: 'gone' when another daemon removed it first; why not, when it cannot be. */
  private async remove(dirFd: number, name: Buffer): Promise<Removal> {
    const p = rawAt(dirFd, name);
    try {
      await fsp.unlink(p);
      return 'removed';
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return 'gone';
      if (code === 'EISDIR' || code === 'EPERM') {
        try {
          await fsp.rmdir(p);
          return 'removed';
        } catch (e2) {
          if ((e2 as NodeJS.ErrnoException).code === 'ENOENT') return 'gone';
          e = e2;
        }
      }
      return { stuck: (e as NodeJS.ErrnoException).code ?? (e as Error).message };
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    this.cancel?.();
    this.cancel = null;
    for (const c of this.rechecks) c();
    this.rechecks.clear();
  }
}

async function isDir(p: string): Promise<boolean> {
  try {
    return (await fsp.stat(p)).isDirectory();
  } catch {
    return false;
  }
}
