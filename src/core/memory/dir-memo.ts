/**
 * What this process remembers of a versioned directory (an agent's memory/
 * or substrate/) from one run to the next: the version log's latest lines
 * (read on from where the last refresh stopped, not from the start) and
 * when stale temps were last looked for. Without it every run's first scan
 * read the whole version log, a cost that grew with the agent's age.
 *
 * What it does not keep: the files' hashes. Those are trusted within one run
 * only (ScanState.cache); each run's first scan reads and hashes the
 * directory again. A file's identity (inode, size, times) cannot vouch for
 * its content for long: a write through a shared mapping (mmap) to a page
 * already dirty changes the content and not the times, and an agent's
 * background process can do that. A fresh hash per run bounds how long such
 * a change can go unrecorded.
 *
 * Contracts:
 * - The log is the host's (the agent cannot write it); a log replaced or
 *   shortened is read from its start (LatestVersions.refresh).
 * - Scans of one directory are serialised by the log's lock (withLogLock),
 *   so a memo has one writer at a time.
 * - At most DIR_MEMOS directories are remembered; the least recently used
 *   is forgotten (its next scan reads the log once from the start).
 */
import { LatestVersions, type VersionedDir } from './version-store.js';

/** Directories remembered per process (memory and substrate of every agent a daemon runs, in most homes). */
export const DIR_MEMOS = 128;

export interface DirMemo {
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
    m = { latest: new LatestVersions(v), tidiedAt: null };
  }
  memos.set(key, m);
  while (memos.size > DIR_MEMOS) memos.delete(memos.keys().next().value as string);
  return m;
}
