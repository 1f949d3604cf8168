/**
 * The daemon's look at a directory the agent can write (/memory): which
 * regular files it holds and their sha256, to find what bash changed
 * (docs/memory.md, "Versions"). The agent controls everything in it, so the
 * scan is the file tools' race-free walk (VirtualFs.walk: each directory
 * opened by name from its parent's descriptor with O_NOFOLLOW, files opened
 * O_NOFOLLOW|O_NONBLOCK), bounded everywhere:
 *
 * - symlinks are never followed (not even inside the directory), FIFOs,
 *   sockets and devices are never opened for reading (only regular files
 *   are; a FIFO swapped in after the lstat fails fstat's regular-file check
 *   without blocking, thanks to O_NONBLOCK);
 * - a file over `maxFileBytes` is not read past that bound, whatever it
 *   grows to meanwhile (readAtMost), and is reported with a null sha256;
 * - at most `maxEntries` entries, `maxTotalBytes` read in all, 64 levels
 *   deep; past a bound the scan says it is incomplete (and why), and the
 *   caller then infers no deletions;
 * - a file that changes while it is read (its size or mtime differ before
 *   and after) is reported `unsure`, not hashed: the next scan sees it;
 * - an entry that changes under the walk (listed as a directory and found a
 *   symlink, gone between the listing and the look: a shell renaming in a
 *   loop) is never looked at again; the scan says it is incomplete, since a
 *   file it did not see may only have moved;
 * - `overBudget` (the caller's time budget) is asked before each entry:
 *   once it gives a reason the scan stops there, incomplete;
 * - a name that is not valid UTF-8 is scanned under its escaped name
 *   (VirtualFs.walk), then as `name` maps it (redacted); two files that end
 *   up with one name are both `unsure` and the scan incomplete, rather than
 *   one hiding the other;
 * - a file's content is hashed and kept as `content` maps it (redacted), so
 *   the caller compares, stores and names what it keeps, not what it read;
 * - it yields to the event loop every SCAN_YIELD_FILES files read or
 *   SCAN_YIELD_BYTES bytes read, whichever comes first, so a directory of
 *   thousands of changed files never stalls the daemon's other sessions.
 *
 * A cache from one scan to the next (keyed by inode, size, mtime and ctime)
 * avoids reading files that did not change.
 */
import fs from 'node:fs';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { readAtMost } from '../sandbox/beneath.js';
import { VirtualFs } from '../sandbox/virtual-fs.js';
import { sha256Of } from './version-store.js';
import { VERSION_PATH_MAX } from '../schema/index.js';

/** The scan yields to the event loop after at most this many files read... */
export const SCAN_YIELD_FILES = 32;
/** ...or this many bytes read, whichever comes first. */
export const SCAN_YIELD_BYTES = 1024 * 1024;

export interface ScannedFile {
  rel: string;
  bytes: number;
  /** null when the file holds more than maxFileBytes (not read). */
  sha256: string | null;
  key: string;
  /** The content read, kept only for a file `wanted` asked for (its hash is the content's). */
  data?: Buffer;
}

export interface TreeScan {
  files: Map<string, ScannedFile>;
  /** Regular files seen whose content is not known this time (changing while read, unreadable, ambiguous name). */
  unsure: Set<string>;
  /** Every entry was looked at (no bound reached). */
  complete: boolean;
  /** Why it is not complete (null when it is): what bound was reached. */
  incomplete: string | null;
}

export interface ScanOptions {
  maxEntries: number;
  maxFileBytes: number;
  maxTotalBytes: number;
  /** Files left out (derived files), by their relative path. */
  exclude?: (rel: string) => boolean;
  /** The previous scan's files, reused for files whose inode, size and times did not change. */
  cache?: Map<string, ScannedFile>;
  /**
   * Whether the caller needs the content of `rel` at `sha256` (a change):
   * the scan then keeps it in ScannedFile.data, reading a cached file again
   * if need be. Kept contents are bounded by maxTotalBytes.
   */
  wanted?: (rel: string, sha256: string) => boolean;
  signal?: AbortSignal;
  /** Why the scan must stop now (its budget is spent), or null to go on; asked before each entry. */
  overBudget?: () => string | null;
  /** A file changed less than this long before it was read is read again by the next scan (default RACY_MS). */
  racyMs?: number;
  /** A file's path as the scan reports it (default: as walked). Must be pure: the cache is keyed by it. */
  name?: (rel: string) => string;
  /** A file's content as the scan hashes and keeps it (default: as read); `bytes` is its length. Must be pure. */
  content?: (data: Buffer) => Buffer;
}

/**
 * How recent a change must be for its file's identity not to be trusted by
 * the next scan. File times move in ticks (a few milliseconds on Linux, up
 * to 2 s on some file systems): a file rewritten to the same size within the
 * tick of the read that hashed it keeps its identity. So a file whose ctime
 * (which nobody can set back) is this close to the read gets no key, and the
 * next scan reads it again; once it is older, a change always moves its
 * ctime past the one recorded. (git calls such index entries racily clean.)
 */
export const RACY_MS = 2000;

/** Why a scan is incomplete when entries changed under its walk (one text: a marker is logged once per run and reason). */
export const CHANGED = 'the directory changed while it was scanned';

/** The key of a file no scan may reuse: it matches no keyOf(). */
const NO_KEY = '';

const keyOf = (st: fs.Stats) => `${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;

/** Scans the host directory `dir`; a missing directory is an empty, complete scan. */
export async function scanTree(dir: string, o: ScanOptions): Promise<TreeScan> {
  const out: TreeScan = { files: new Map(), unsure: new Set(), complete: true, incomplete: null };
  const stop = (why: string) => {
    out.complete = false;
    out.incomplete ??= why;
  };
  const vfs = new VirtualFs([{ target: '/d', host: dir, writable: false }], { home: '/d' });
  let root;
  try {
    root = vfs.open('/d');
  } catch {
    return out;
  }
  let budget: string | null = null;
  let total = 0;
  let files = 0;
  let bytes = 0;
  try {
    if (!root.stat.isDirectory()) return out;
    const walked = await vfs.walk(
      root,
      async (e) => {
        if (o.exclude?.(e.rel)) return true;
        const rel = o.name ? o.name(e.rel) : e.rel;
        // A path no version line can name (the walk goes deeper than PATH_MAX, one level at a time) is left
        // out before it is a key anywhere: such keys all hash alike in a Map, and one of them in the lines
        // would fail the scan's whole append, at every scan. The scan is incomplete (no deletion inferred).
        if (rel.length > VERSION_PATH_MAX) {
          stop(`a path longer than ${VERSION_PATH_MAX} characters`);
          return true;
        }
        if (out.files.has(rel) || out.unsure.has(rel)) {
          // Two names shown alike (a non-UTF-8 name and its escaped text, two names redacted alike): neither is trusted.
          out.files.delete(rel);
          out.unsure.add(rel);
          stop(`two files are named ${JSON.stringify(rel)} once escaped or redacted`);
          return true;
        }
        const cached = o.cache?.get(rel);
        const key = keyOf(e.stat);
        if (cached && cached.key === key && (cached.sha256 === null || !o.wanted?.(rel, cached.sha256))) {
          out.files.set(rel, { rel: cached.rel, bytes: cached.bytes, sha256: cached.sha256, key: cached.key });
          return true;
        }
        if (e.stat.size > o.maxFileBytes) {
          out.files.set(rel, { rel, bytes: e.stat.size, sha256: null, key });
          return true;
        }
        if (total + e.stat.size > o.maxTotalBytes) {
          stop(`more than ${o.maxTotalBytes} bytes to read`);
          return false;
        }
        const got = readWhole(e, o.maxFileBytes, o.racyMs ?? RACY_MS, o.content);
        if (got === 'unsure') out.unsure.add(rel);
        else if (got === 'gone') stop(CHANGED);
        else {
          total += got.read;
          const { data, read, ...rest } = got;
          const keep = data !== null && rest.sha256 !== null && o.wanted?.(rel, rest.sha256) === true;
          out.files.set(rel, { rel, ...rest, ...(keep ? { data } : {}) });
          bytes += read;
        }
        files += 1;
        if (files >= SCAN_YIELD_FILES || bytes >= SCAN_YIELD_BYTES) {
          files = 0;
          bytes = 0;
          await yieldToLoop();
        }
        return true;
      },
      {
        maxEntries: o.maxEntries,
        signal: o.signal,
        stop: () => {
          budget ??= o.overBudget?.() ?? null;
          return budget !== null;
        },
      },
    );
    if (walked.truncated) stop(`more than ${o.maxEntries} entries`);
    if (walked.tooDeep) stop('directories nested deeper than the scan goes (64 levels)');
    if (walked.changed > 0) stop(CHANGED);
    if (budget !== null) stop(budget);
    else if (walked.stopped) stop('stopped');
  } finally {
    root.close();
  }
  return out;
}

/** A file read whole: `read` bytes read; `bytes`, `sha256` and `data` of its content as `content` maps it. */
function readWhole(e: { open(): number }, max: number, racyMs: number, content?: (data: Buffer) => Buffer): { read: number; bytes: number; sha256: string | null; key: string; data: Buffer | null } | 'unsure' | 'gone' {
  let fd: number;
  try {
    fd = e.open();
  } catch (err) {
    // Removed, or swapped for a symlink (ELOOP) since the walk looked: not followed.
    return (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'gone' : 'unsure';
  }
  try {
    const before = fs.fstatSync(fd);
    if (!before.isFile()) return 'unsure';
    const data = readAtMost(fd, max, before.size);
    const after = fs.fstatSync(fd);
    if (after.size !== before.size || after.mtimeMs !== before.mtimeMs) return 'unsure';
    const key = Date.now() - after.ctimeMs < racyMs ? NO_KEY : keyOf(after);
    if (data === null) return { read: after.size, bytes: after.size, sha256: null, key, data: null };
    const kept = content ? content(data) : data;
    return { read: data.length, bytes: kept.length, sha256: sha256Of(kept), key, data: kept };
  } catch {
    return 'unsure';
  } finally {
    fs.closeSync(fd);
  }
}
