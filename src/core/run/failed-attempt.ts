/**
 * "Record a failed attempt and reschedule", written once. A failed attempt
 * is two facts in the log: a `session.error` whose retry status is
 * `retrying`, and the `session.status_rescheduled` that closes the run with
 * a `retry_at` drawn from the backoff (backoff.ts: it grows with the
 * session's failures in a row, with full jitter from deps.random).
 *
 * Inside a run the journal writes the error at once and the orchestration
 * writes the reschedule when it closes the run (RunJournal.failedAttempt).
 * Outside any run (the daemon saw wake() itself throw) recordFailedRun
 * writes a run of its own around the two: the log accepts runtime lines only
 * inside a run's bracket (docs/format.md).
 */
import { iso } from '../foundation/clock.js';
import { runIdAfter } from '../foundation/ids.js';
import type { NewEvent } from '../schema/index.js';
import { backoffMs } from './backoff.js';
import type { Ending, Runtime } from './run-context.js';

export type SessionErrorType = Extract<NewEvent, { type: 'session.error' }>['error']['type'];

export interface Failure {
  type?: SessionErrorType;
  code: string;
  message: string;
}

/** The retrying error of a failed attempt. */
export function retryingError(f: Failure): NewEvent {
  return { type: 'session.error', error: { type: f.type ?? 'unknown_error', code: f.code, message: f.message, retry_status: { type: 'retrying' } } };
}

/**
 * The ending that reschedules the session after `failures` failures in a
 * row (the snapshot's consecutive_failures). `reason` defaults to
 * "<code>: <message>".
 */
export function rescheduleAfter(rt: Runtime, failures: number, f: Failure, reason?: string): Extract<Ending, { kind: 'rescheduled' }> {
  return { kind: 'rescheduled', reason: reason ?? `${f.code}: ${f.message}`, retryAt: iso(rt.deps.clock.now() + backoffMs(failures, rt.deps.random)) };
}

/** The line that writes a rescheduled ending down. */
export function rescheduledEvent(e: Extract<Ending, { kind: 'rescheduled' }>): NewEvent {
  return { type: 'session.status_rescheduled', reason: e.reason, retry_at: e.retryAt };
}

/**
 * A run that failed outside any run's bracket (wake() itself threw: an I/O
 * failure, a bug), recorded as a run of its own: opened, failed,
 * rescheduled. The caller holds the session's lease.
 */
export function recordFailedRun(rt: Runtime, sessionId: string, f: Failure): void {
  const snap = rt.store.snapshot(sessionId);
  const runId = runIdAfter(rt.deps.ids.run(), snap.last_wake_id);
  const ending = rescheduleAfter(rt, snap.consecutive_failures, f);
  rt.store.appendEvents(sessionId, [{ type: 'session.status_running', wake_id: runId, trigger: 'recovery', processed_event_ids: [] }, retryingError(f), rescheduledEvent(ending)], { wakeId: runId });
}
