/**
 * What wake() takes (WakeOptions) and returns (WakeResult): the contract the
 * daemon, the CLI, the library and the tests drive a run through.
 */
import type { EvaluationResult, SessionEvent, SessionStatus, StopReason, Trigger } from '../schema/index.js';
import type { LoopHooks } from './loop-hooks.js';
import type { RunContext } from './run-context.js';
import type { RunUsage } from './journal.js';

export interface WakeOptions {
  /** What caused the run; default: recovery, event or wake_queue, from what is pending. */
  trigger?: Trigger;
  /** Aborts the run; its `reason` should be an AbortReason. */
  signal?: AbortSignal;
  /** Stale time of the lease (tests shorten it). */
  leaseStaleMs?: number;
  /** Called once the run holds the lease and will execute (not for skipped runs). */
  onStart?: (info: { wakeId: string; trigger: Trigger }) => void;
  /** Retry a failed run now, without waiting out its backoff (its cause was fixed, e.g. a definition). */
  retryNow?: boolean;
  /** Called with the events a run writes, as it writes them (after redaction). Must not throw. */
  onEvents?: (events: readonly SessionEvent[]) => void;
  /** Changes the run's loop hooks (default: defaultHooks) — for embedders and tests; capabilities add theirs in default-hooks.ts. */
  hooks?: (defaults: LoopHooks, ctx: RunContext) => LoopHooks;
}

export interface WakeResult {
  session_id: string;
  outcome: 'executed' | 'skipped';
  /** Why nothing ran: nothing_pending, requires_action, rescheduled, terminated. */
  skip_reason: string | null;
  wake_id: string | null;
  trigger: Trigger | null;
  status: SessionStatus;
  /** The session's parent, for a child (its run's report goes there when it ends idle); null otherwise. */
  parent_session_id: string | null;
  stop_reason: StopReason | null;
  retry_at: string | null;
  processed_event_ids: string[];
  wakes_consumed: string[];
  wakes_scheduled: string[];
  /** Messages of the session.error events this run appended. */
  errors: string[];
  /**
   * Why the run failed, when it did: `invalid_definition` (the agent or
   * environment does not load), `run_failed` (a bug or an I/O failure), or
   * the code of the error that ended it (rescheduled, or retries_exhausted).
   * null for a run that ended cleanly or was skipped.
   */
  failure: { code: string; message: string } | null;
  usage: RunUsage;
  tool_calls: number;
  /**
   * The outcome evaluations this run ended (its span.outcome_evaluation_end
   * events, in order; `iteration` counts from 0 as in the log). [] when it
   * graded nothing.
   */
  outcome_evaluations: Array<{ outcome_id: string; iteration: number; result: EvaluationResult }>;
  started_at: string;
  duration_ms: number;
}
