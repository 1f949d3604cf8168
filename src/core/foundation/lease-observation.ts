/**
 * Staleness on a home shared between hosts (lease.ts, "shared"): a lock is
 * stale once this process has seen its mtime stay unchanged for `stale` ms
 * of its own monotonic clock. Only durations measured here count, so no
 * other host's clock, and no skew, decides it.
 */
import fs from 'node:fs';
import { performance } from 'node:perf_hooks';
import type { LockPaths } from './lease.js';
import { removeTomb } from './lock-tomb.js';

/** What this process last saw of each lock it found taken: its mtime, and since when (performance.now()) unchanged. */
const observed = new Map<string, { mtimeMs: number; since: number }>();
const MAX_OBSERVED = 10_000;

/**
 * Whether the lock at p.lease has gone `staleMs` of this process's
 * monotonic clock without a refresh that this host could see. 0: it had,
 * and has been taken away (renamed to a tombstone, which is checked to be
 * the very lock observed; or it was gone already): lock again. Otherwise
 * how long to wait before looking again. `observeOnly`: only look (a
 * daemon watching work it may take later starts the watch early), never
 * take the lock away.
 */
export function observedStale(p: LockPaths, staleMs: number, now = performance.now(), opts: { observeOnly?: boolean } = {}): number {
  let st: fs.Stats;
  try {
    st = fs.statSync(p.lease);
  } catch {
    observed.delete(p.lease);
    return 0;
  }
  const seen = observed.get(p.lease);
  if (!seen || seen.mtimeMs !== st.mtimeMs) {
    if (observed.size >= MAX_OBSERVED) observed.delete(observed.keys().next().value as string);
    observed.set(p.lease, { mtimeMs: st.mtimeMs, since: now });
    return staleMs;
  }
  const left = staleMs - (now - seen.since);
  if (left > 0 || opts.observeOnly) return Math.max(left, 0.001);
  observed.delete(p.lease);
  const tomb = `${p.lease}.stale-${process.pid}-${Date.now()}`;
  try {
    fs.renameSync(p.lease, tomb);
  } catch {
    return 0; // gone or taken meanwhile: the next lock attempt tells
  }
  const moved = fs.statSync(tomb, { throwIfNoEntry: false });
  if (!moved || moved.mtimeMs !== st.mtimeMs) {
    // Refreshed since the look: the holder is alive (a network file system's attribute cache showed an old
    // mtime until the rename made it look again), so the lock is given back. Known gap: a rename replaces an
    // empty directory, so a lock another process made in the instant between the two renames is replaced.
    try {
      fs.renameSync(tomb, p.lease);
    } catch {
      // a new lock stands there now; its maker won the race
    }
    return staleMs;
  }
  // Never recursively: a lock is an empty directory, and one that is not is left in place (lock-tomb.ts).
  removeTomb(tomb);
  return 0;
}
