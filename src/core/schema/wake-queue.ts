/**
 * wake-queue.jsonl: the append-only journal of revisits (SPEC §5).
 *
 * A revisit is a `wake.scheduled` record; its fate is a later record naming it
 * (`wake.consumed`, `wake.cancelled`). A line written by hand may be the
 * shorthand `{due_at | delay_seconds, reason}`: it is a `wake.scheduled` with
 * id `wake_line_<N>`, and `delay_seconds` counts from when the line is read.
 *
 * A `wake.scheduled` with `every` (seconds) or `cron` (+ `timezone`) is a
 * recurring revisit: `due_at` is its first firing (for cron, the first
 * occurrence at or after it), and each firing is taken in and consumed like
 * a revisit of its own, under the id `<schedule id>@<firing time>`
 * (wake-queue-fold.ts). A `wake.cancelled` of the schedule's own id stops it.
 */
import * as z from 'zod';
import { Timestamp } from './common.js';
import { refineRecurrence, type Recurrence } from './recurrence.js';

/** `heartbeat`: the recurring revisit agent.yaml's `heartbeat:` gives a root session (run/heartbeat.ts). */
export const WakeSource = z.enum(['agent', 'cli', 'hand', 'retry', 'daemon', 'heartbeat']);
export type WakeSource = z.infer<typeof WakeSource>;

const scheduledFields = {
  /** `@` is kept for the ids of a recurring revisit's firings. */
  id: z.string().min(1).regex(/^[^@]*$/, 'expected an id without "@" (it names the firings of recurring revisits)').optional(),
  due_at: Timestamp.optional(),
  /** At most ten years: anything later is surely a mistake (and past what a Date can hold, a crash). */
  delay_seconds: z.number().nonnegative().max(10 * 366 * 86_400, 'expected at most ten years of seconds').optional(),
  reason: z.string().min(1, 'expected a non-empty reason'),
  source: WakeSource.optional(),
  created_at: Timestamp.optional(),
  /** The wake this one re-schedules after the run that consumed it failed. */
  retry_of: z.string().optional(),
  /** How many times this revisit has been retried (1 for the first retry). */
  attempt: z.number().int().positive().optional(),
  /** The run that scheduled it, when an agent did. */
  wake_run_id: z.string().optional(),
  /** Recurring: seconds between firings, counted from due_at (at least 60). */
  every: z.number().int().optional(),
  /** Recurring: a cron expression (5 fields, or @hourly, @daily, ...), read in `timezone`. */
  cron: z.string().optional(),
  /** The IANA time zone of `cron` (default UTC). */
  timezone: z.string().optional(),
};

type ScheduledShape = { due_at?: string | undefined; delay_seconds?: number | undefined; every?: number | undefined; cron?: string | undefined; timezone?: string | undefined };

function checkScheduled(v: ScheduledShape, ctx: z.RefinementCtx) {
  if ((v.due_at === undefined) === (v.delay_seconds === undefined)) {
    ctx.addIssue({
      code: 'custom',
      path: ['due_at'],
      message: 'expected exactly one of due_at (ISO time) or delay_seconds (number)',
    });
  }
  // A delay would be pinned by a second line, and a recurring revisit's firings are named by their times: give the first one.
  if ((v.every !== undefined || v.cron !== undefined) && v.delay_seconds !== undefined) {
    ctx.addIssue({ code: 'custom', path: ['delay_seconds'], message: 'a recurring revisit (every or cron) needs due_at, its first firing, not delay_seconds' });
  }
  refineRecurrence(v, ctx);
}

export const WakeScheduled = z
  .looseObject({ type: z.literal('wake.scheduled'), ...scheduledFields })
  .superRefine(checkScheduled);

/** The hand-written shorthand: no `type`. */
export const WakeShorthand = z.looseObject(scheduledFields).superRefine(checkScheduled);

export const WakeConsumed = z.looseObject({
  type: z.literal('wake.consumed'),
  wake_id: z.string().min(1),
  wake_run_id: z.string().min(1),
  at: Timestamp,
});

export const WakeCancelled = z.looseObject({
  type: z.literal('wake.cancelled'),
  wake_id: z.string().min(1),
  reason: z.string(),
  at: Timestamp,
});

export const WAKE_RECORD_TYPES = ['wake.scheduled', 'wake.consumed', 'wake.cancelled'] as const;

/** A wake record after normalisation: ids and due times resolved. */
export type WakeRecord =
  | {
      type: 'wake.scheduled';
      id: string;
      due_at: string;
      reason: string;
      source: WakeSource;
      created_at: string;
      retry_of?: string | undefined;
      attempt?: number | undefined;
      wake_run_id?: string | undefined;
      /** true when due_at was computed from delay_seconds at read time (not yet pinned in the journal). */
      provisional?: boolean;
      /** A recurring revisit's rule; due_at is then its first firing. */
      recurrence?: Recurrence | undefined;
    }
  | z.output<typeof WakeConsumed>
  | z.output<typeof WakeCancelled>;

/** What a writer appends; `id`, `created_at` are assigned by the writer helper. */
export type NewWakeScheduled = {
  due_at: string;
  reason: string;
  source: WakeSource;
  retry_of?: string;
  attempt?: number;
  wake_run_id?: string;
  /** A recurring revisit: due_at is its first firing (for cron, an occurrence). */
  recurrence?: Recurrence;
  /** When it was asked for, when the caller computed due_at from that moment (default: the time of the write). */
  created_at?: string;
};
