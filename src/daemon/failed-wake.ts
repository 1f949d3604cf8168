/**
 * A wake that threw outside the harness (an I/O failure, a bug): the daemon
 * records it in the log as a failed run of its own (failed-attempt.ts), so
 * the session is retried with the same backoff as a failing model.
 */
import { iso } from '../core/foundation/clock.js';
import { takeSessionLease } from '../core/store/session-lease.js';
import { recordFailedRun } from '../core/run/failed-attempt.js';
import type { Runtime } from '../core/run/run-context.js';

/**
 * Takes the session's lease and records the failed run under it. Never
 * throws: when the failure cannot even be recorded (the lease is held, the
 * log cannot be written), nothing is, and the daemon's next look at the
 * session (a hint or the sweep) finds its work still there.
 */
export async function recordFailedWake(rt: Runtime, sessionId: string, e: Error, leaseStaleMs: number): Promise<void> {
  try {
    const p = rt.store.paths(sessionId);
    const lease = await takeSessionLease(p, rt.store.shared, { purpose: 'daemon', nowIso: iso(rt.deps.clock.now()), staleMs: leaseStaleMs });
    try {
      recordFailedRun(rt, sessionId, { code: 'run_failed', message: `the run failed: ${e.message}` });
    } finally {
      await lease.release();
    }
  } catch {
    // could not even record it; the sweep will look again
  }
}
