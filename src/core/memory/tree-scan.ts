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
 *   deep; past a bound the scan says it is incomplete, and the caller then
 *   infers no deletions;
 * - a file that changes while it is read (its size or mtime differ before
 *   and after) is reported `unsure`, not hashed: the next scan sees it.
 *
 * A cache from one scan to the next (keyed by inode, size, mtime and ctime)
 * avoids reading files that did not change.
 */
import fs from 'node:fs';
import { readAtMost } from '../sandbox/beneath.js';
import { VirtualFs } from '../sandbox/virtual-fs.js';
import { sha256Of } from './version-store.js';

export interface ScannedFile {
  rel: string;
  bytes: number;
  /** null when the file holds more than maxFileBytes (not read). */
  sha256: string | null;
  key: string;
}

export interface TreeScan {
  files: Map<string, ScannedFile>;
  /** Regular files seen whose content is not known this time (changing while read, unreadable). */
  unsure: Set<string>;
  /** Every entry was looked at (no bound reached). */
  complete: boolean;
}

export interface ScanOptions {
  maxEntries: number;
  maxFileBytes: number;
  maxTotalBytes: number;
  /** Files left out (derived files, temp files), by their relative path. */
  exclude?: (rel: string) => boolean;
  /** The previous scan's files, reused for files whose inode, size and times did not change. */
  cache?: Map<string, ScannedFile>;
  signal?: AbortSignal;
}

const keyOf = (st: fs.Stats) => `${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;

/** Scans the host directory `dir`; a missing directory is an empty, complete scan. */
export async function scanTree(dir: string, o: ScanOptions): Promise<TreeScan> {
  const out: TreeScan = { files: new Map(), unsure: new Set(), complete: true };
  const vfs = new VirtualFs([{ target: '/d', host: dir, writable: false }], { home: '/d' });
  let root;
  try {
    root = vfs.open('/d');
  } catch {
    return out;
  }
  let total = 0;
  try {
    if (!root.stat.isDirectory()) return out;
    const walked = await vfs.walk(
      root,
      (e) => {
        if (o.exclude?.(e.rel)) return true;
        const cached = o.cache?.get(e.rel);
        const key = keyOf(e.stat);
        if (cached && cached.key === key) {
          out.files.set(e.rel, cached);
          return true;
        }
        if (e.stat.size > o.maxFileBytes) {
          out.files.set(e.rel, { rel: e.rel, bytes: e.stat.size, sha256: null, key });
          return true;
        }
        if (total + e.stat.size > o.maxTotalBytes) {
          out.complete = false;
          return false;
        }
        const got = readWhole(e, o.maxFileBytes);
        if (got === 'unsure') out.unsure.add(e.rel);
        else if (got !== 'gone') {
          total += got.bytes;
          out.files.set(e.rel, { rel: e.rel, ...got });
        }
        return true;
      },
      { maxEntries: o.maxEntries, signal: o.signal },
    );
    if (walked.truncated || o.signal?.aborted) out.complete = false;
  } finally {
    root.close();
  }
  return out;
}

function readWhole(e: { open(): number }, max: number): { bytes: number; sha256: string | null; key: string } | 'unsure' | 'gone' {
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
    if (data === null) return { bytes: after.size, sha256: null, key: keyOf(after) };
    return { bytes: data.length, sha256: sha256Of(data), key: keyOf(after) };
  } catch {
    return 'unsure';
  } finally {
    fs.closeSync(fd);
  }
}
