/**
 * Staleness on a home shared between hosts (lease.ts, "shared"): a lock is
 * stale once this process has seen its mtime stay unchanged for `stale` ms
 * of its own monotonic clock. Only durations measured here count, so no
 * other host's clock, and no skew, decides it.
 */
import fs from 'node:fs';
import { performance } from 'node:perf_hooks';
import type { LockPaths } from './lease.js';

/** What this process last saw of each lock it found taken: its mtime, and since when (performance.now()) unchanged. */
const observed = new Map<string, { mtimeMs: number; since: number }>();
const MAX_OBSERVED = 10_000;

/**
 * Whether the lock at p.lease has gone `staleMs` of this process's
 * monotonic clock without a refresh that this host could see. 0: it had,
 * and has been taken away (renamed to a tombstone and removed, or it was
 * gone already): lock again. Otherwise
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
  // Refreshed in the instant between the look and the rename, it is not given back: renaming it onto the
  // path again would replace a lock another process may have made there meanwhile (a rename replaces an empty
  // directory), and two would hold the lease. Its holder finds it gone at its next refresh and stops writing.
  try {
    fs.rmSync(tomb, { recursive: true, force: true });
  } catch {
    // a leftover tombstone is harmless
  }
  return 0;
}
