/**
 * What this process remembers of a versioned directory (an agent's memory/
 * or substrate/) from one run to the next: the last scan's files, by the
 * identity they had (inode, size and times, so an unchanged file is not read
 * and hashed again), the version log's latest lines (read on from where the
 * last refresh stopped, not from the start), and when stale temps were last
 * looked for.
 *
 * Without it every run's first scan read and hashed the whole directory (up
 * to MEMORY_SCAN_MAX_BYTES) and the whole version log, however little had
 * changed: a cost that grew with the agent's age, paid at the end of every
 * run of every session of the agent.
 *
 * Contracts:
 * - Only memory of facts the files still decide: a file whose identity
 *   changed is read again, and a log replaced or shortened is read from its
 *   start (LatestVersions.refresh).
 * - Scans of one directory are serialised by the log's lock (withLogLock),
 *   so a memo has one writer at a time.
 * - At most DIR_MEMOS directories are remembered; the least recently used
 *   is forgotten (its next scan reads everything once).
 */
import type { ScannedFile } from './tree-scan.js';
import { LatestVersions, type VersionedDir } from './version-store.js';

/** Directories remembered per process: every agent a daemon runs, in most homes. */
export const DIR_MEMOS = 32;

export interface DirMemo {
  /** The last complete or partial scan's files (hashes, not contents). */
  cache: Map<string, ScannedFile>;
  /** The version log's latest line per file and the store's size as the log tells it. */
  readonly latest: LatestVersions;
  /** When stale temps were last looked for here (ms), or null. */
  tidiedAt: number | null;
}

const memos = new Map<string, DirMemo>();

/** The memo of `v` (made empty on first use). */
export function dirMemo(v: VersionedDir): DirMemo {
  const key = `${v.dir}\0${v.log}`;
  let m = memos.get(key);
  if (m) {
    memos.delete(key);
  } else {
    m = { cache: new Map(), latest: new LatestVersions(v), tidiedAt: null };
  }
  memos.set(key, m);
  while (memos.size > DIR_MEMOS) memos.delete(memos.keys().next().value as string);
  return m;
}
