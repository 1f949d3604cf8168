/**
 * Backoff for runs that keep failing: 2 s, doubling, capped at 5 min.
 * `failures` is how many failed in a row before this one (0 for the first).
 */
export const BACKOFF_BASE_MS = 2000;
export const BACKOFF_MAX_MS = 5 * 60_000;

export function backoffMs(failures: number): number {
  return Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** Math.max(0, Math.min(failures, 20)));
}
