/**
 * One run of a session under the daemon (daemon.ts runSession): wake() with
 * its activation records (runtime/activations.jsonl), the operator's lines,
 * and what a failure means for the session: a contended lease holds it until
 * the lease could have gone stale or is seen gone (lease-watch.ts), a session
 * gone is forgotten, anything else thrown is an abandoned run recorded as a
 * failed attempt (failed-wake.ts).
 * Never throws: the daemon's queue must go on whatever one session does.
 */
import { iso } from '../core/foundation/clock.js';
import { OpenboaError } from '../core/foundation/errors.js';
import { wake } from '../core/run/wake.js';
import type { Runtime } from '../core/run/run-context.js';
import type { WakeResult } from '../core/run/wake-api.js';
import { endActivation, recordActivation } from './activations.js';
import { recordFailedWake } from './failed-wake.js';
import type { OperatorLog } from './operator-log.js';
import type { RunPacing } from './run-pacing.js';
import type { SessionHolds } from './session-holds.js';
import { reportToParent } from '../core/run/child-report.js';
import type { SessionSnapshot } from '../core/schema/index.js';
import type { LeaseWatch } from './lease-watch.js';

/** What of the daemon a run uses. */
export interface DaemonRunDeps {
  rt: Runtime;
  log: OperatorLog;
  holds: SessionHolds;
  pacing: RunPacing;
  leaseStaleMs: number;
  /** Sessions held back by another process's lease, looked at again when it goes (lease-watch.ts). */
  leases: Pick<LeaseWatch, 'watch' | 'forget'>;
  /** The session is gone: drop what the daemon keeps of it. */
  forget: (id: string) => void;
}

export interface RunOutcome {
  /** wake()'s result; null when it threw. */
  result: WakeResult | null;
  /** wake() ran nothing (nothing pending, waiting on a person, …). */
  skipped: boolean;
  /** wake() threw something other than a busy lease or a session gone. */
  threw: boolean;
}

export interface RunRequest {
  signal: AbortSignal;
  retryNow: boolean;
  /** A run that takes children's reports in: it goes ahead, the others step aside (run-pacing.ts). */
  urgent: boolean;
  /** Called once the run holds the lease (and again, harmlessly, by the caller when it ends). */
  opening: () => void;
  /** Takes one of the agent's run slots across daemons (agent-slots.ts, max_concurrent_runs), waiting for one; null: no limit. */
  slot?: () => Promise<{ release(): Promise<void> } | null>;
}

export async function runRecorded(d: DaemonRunDeps, id: string, o: RunRequest): Promise<RunOutcome> {
  const { rt, log } = d;
  const runtimeDir = rt.store.paths(id).runtime;
  const at = () => iso(rt.deps.clock.now());
  let slot: { release(): Promise<void> } | null = null;
  // A busy lease, not a full agent (the slot): only the lease is watched for its end.
  let leasing = false;
  d.leases.forget(id);
  try {
    if (o.urgent) d.pacing.begin(id);
    slot = (await o.slot?.()) ?? null;
    leasing = true;
    const r = await wake(rt, id, {
      signal: o.signal,
      retryNow: o.retryNow,
      leaseStaleMs: d.leaseStaleMs,
      onStart: (info) => {
        o.opening();
        recordActivation(runtimeDir, { kind: 'leased', at: at(), wake_id: info.wakeId, trigger: info.trigger });
        log.start(id, info);
      },
      onEvents: (events) => log.events(id, events),
      // A run that takes in reports goes ahead of the others; the others step aside for it.
      ...(o.urgent ? {} : { hooks: (defaults) => d.pacing.paced(defaults) }),
    });
    if (r.outcome !== 'executed') return { result: r, skipped: true, threw: false };
    log.end(r);
    recordActivation(runtimeDir, endActivation(r, at()));
    return { result: r, skipped: false, threw: false };
  } catch (e) {
    if (OpenboaError.is(e) && e.code === 'busy') {
      // Retried once the lease could have gone stale, or sooner when the lease says when (a lock whose maker may have died).
      const until = rt.deps.clock.now() + (e.retryAfterMs ?? d.leaseStaleMs + 1000);
      d.holds.holdUntil(id, until);
      if (leasing) d.leases.watch(id);
      recordActivation(runtimeDir, { kind: 'blocked', at: at(), reason: `lease_contended: ${e.message}`, retry_at: iso(until) });
      return { result: null, skipped: false, threw: false };
    }
    if (OpenboaError.is(e) && e.code === 'not_found') {
      d.forget(id);
      return { result: null, skipped: false, threw: false };
    }
    recordActivation(runtimeDir, { kind: 'abandoned', at: at(), reason: (e as Error).message });
    log.notice(`run of ${id} failed: ${(e as Error).message}`, { session_id: id });
    await recordFailedWake(rt, id, e as Error, d.leaseStaleMs);
    return { result: null, skipped: false, threw: true };
  } finally {
    await slot?.release();
  }
}

/** Holds back a session that spins (SessionHolds.guardSpin), and says so to the operator and in its activations. */
export function recordSpin(d: DaemonRunDeps, id: string, runtimeDir: string): void {
  const spin = d.holds.guardSpin(id);
  if (!spin) return;
  const { runs: n, until } = spin;
  d.log.notice(`session ${id} made no progress in ${n} runs in a row; next try at ${iso(until)}`, { session_id: id, retry_at: iso(until) });
  recordActivation(runtimeDir, { kind: 'blocked', at: iso(d.rt.deps.clock.now()), reason: `no progress in ${n} runs in a row`, retry_at: iso(until) });
}

/** A child idle after a run its parent has no report of (a crash came between): the report is delivered now. */
export function repairReport(d: DaemonRunDeps, id: string, snap: SessionSnapshot): void {
  try {
    if (reportToParent(d.rt, id, snap) === 'delivered') d.log.notice(`delivered the report of session ${id}'s last run to its parent ${snap.parent_session_id}`, { session_id: id });
  } catch (e) {
    d.log.notice(`cannot report session ${id}'s last run to its parent: ${(e as Error).message}`, { session_id: id });
  }
}
