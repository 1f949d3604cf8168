/**
 * Backoff for runs that keep failing: up to 2 s, doubling, capped at 5 min,
 * with full jitter: the wait is drawn from [floor, cap] by `random` (deps),
 * so sessions that failed together (a provider outage) do not all retry in
 * the same instant. The floor (250 ms) keeps a failing provider from being
 * asked again at once. `failures` is how many failed in a row before this
 * one (0 for the first).
 */
export const BACKOFF_BASE_MS = 2000;
export const BACKOFF_MAX_MS = 5 * 60_000;
const BACKOFF_FLOOR_MS = 250;

/** The cap of the wait after `failures` failures in a row. */
export function backoffCapMs(failures: number): number {
  return Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** Math.max(0, Math.min(failures, 20)));
}

/** The wait after `failures` failures in a row; `random` gives a number in [0, 1] (1: the cap itself). */
export function backoffMs(failures: number, random: () => number): number {
  const cap = backoffCapMs(failures);
  const r = Math.min(1, Math.max(0, random()));
  return Math.round(BACKOFF_FLOOR_MS + (cap - BACKOFF_FLOOR_MS) * r);
}
