/**
 * Recurring revisits (docs/format.md, "Recurring revisits"): the rule of a
 * `wake.scheduled` line that repeats (`every` N seconds, or a `cron`
 * expression in a `timezone`), the same rule as the agent's `schedule_wake`
 * and agent.yaml's `heartbeat:` take it, and their bounds.
 *
 * Bounds, so an agent cannot make a loop of its revisits: at least a minute
 * between firings (`every` >= 60 s; a cron expression has no seconds field),
 * at most a year.
 */
import * as z from 'zod';
import { EXPECTED_DURATION, parseDuration } from '../schedule/duration.js';
import { cronProblem, DEFAULT_TIMEZONE, timezoneProblem } from '../schedule/cron.js';

export const MIN_EVERY_SECONDS = 60;
export const MAX_EVERY_SECONDS = 366 * 86_400;

/** The rule of a recurring revisit as the fold keeps it: every N seconds from its first firing, or a cron expression in a time zone. */
export const Recurrence = z.union([
  z.strictObject({ every: z.number().int().min(MIN_EVERY_SECONDS).max(MAX_EVERY_SECONDS) }),
  z.strictObject({ cron: z.string().min(1), timezone: z.string().min(1) }),
]);
export type Recurrence = z.infer<typeof Recurrence>;

/** The fields that make a revisit recurring, as a line, the tool or agent.yaml give them (`every` in seconds or as a duration). */
export interface RecurrenceFields {
  every?: number | string | undefined;
  cron?: string | undefined;
  timezone?: string | undefined;
}

type Issue = { path: string[]; message: string };

/** `every` in whole seconds, or why it is not an interval a revisit may repeat at. */
export function everySeconds(every: number | string): { seconds: number } | { problem: string } {
  let seconds: number;
  if (typeof every === 'number') {
    if (!Number.isInteger(every)) return { problem: `expected whole seconds, got ${every}` };
    seconds = every;
  } else {
    const ms = parseDuration(every);
    if (ms === null) return { problem: `"${every}" is not a duration (${EXPECTED_DURATION}, or seconds)` };
    seconds = Math.round(ms / 1000);
  }
  if (seconds < MIN_EVERY_SECONDS) return { problem: `at least ${MIN_EVERY_SECONDS} seconds (1m) between firings, got ${seconds}` };
  if (seconds > MAX_EVERY_SECONDS) return { problem: `at most ${MAX_EVERY_SECONDS} seconds (366d) between firings, got ${seconds}` };
  return { seconds };
}

/** What is wrong with the recurrence fields of `v`, each naming its field; [] when they are fine (or absent). */
export function recurrenceIssues(v: RecurrenceFields): Issue[] {
  const issues: Issue[] = [];
  if (v.every !== undefined && v.cron !== undefined) issues.push({ path: ['cron'], message: 'expected either every or cron, not both' });
  if (v.timezone !== undefined && v.cron === undefined) issues.push({ path: ['timezone'], message: 'a timezone belongs to a cron expression: give cron too' });
  if (v.every !== undefined) {
    const e = everySeconds(v.every);
    if ('problem' in e) issues.push({ path: ['every'], message: e.problem });
  }
  if (v.timezone !== undefined) {
    const tz = timezoneProblem(v.timezone);
    if (tz) issues.push({ path: ['timezone'], message: tz });
  }
  if (v.cron !== undefined && (v.timezone === undefined || !timezoneProblem(v.timezone))) {
    const c = cronProblem(v.cron, v.timezone ?? DEFAULT_TIMEZONE);
    if (c) issues.push({ path: ['cron'], message: c });
  }
  return issues;
}

/** The rule the fields describe (checked by recurrenceIssues first), or null for a one-shot revisit. */
export function recurrenceOf(v: RecurrenceFields): Recurrence | null {
  if (v.cron !== undefined) return { cron: v.cron.trim(), timezone: v.timezone ?? DEFAULT_TIMEZONE };
  if (v.every !== undefined) {
    const e = everySeconds(v.every);
    if ('problem' in e) throw new Error(`every: ${e.problem}`);
    return { every: e.seconds };
  }
  return null;
}

/** Adds the issues of the recurrence fields to a zod refinement. */
export function refineRecurrence(v: RecurrenceFields, ctx: z.RefinementCtx): void {
  for (const i of recurrenceIssues(v)) ctx.addIssue({ code: 'custom', path: i.path, message: i.message });
}

export const DEFAULT_HEARTBEAT_MESSAGE = 'Heartbeat: look over your work and whatever waits for you. If nothing needs doing, say so in a sentence and end your turn.';

/**
 * agent.yaml `heartbeat:`: every root session of the agent gets a recurring
 * revisit with source `heartbeat` (docs/daemon.md, "Heartbeats").
 */
export const HeartbeatSettings = z
  .strictObject({
    every: z.union([z.number(), z.string()]).optional(),
    cron: z.string().optional(),
    timezone: z.string().optional(),
    /** What the agent is told when its heartbeat wakes it. */
    message: z.string().trim().min(1).max(2000).default(DEFAULT_HEARTBEAT_MESSAGE),
  })
  .superRefine((h, ctx) => {
    if (h.every === undefined && h.cron === undefined) ctx.addIssue({ code: 'custom', path: ['every'], message: 'expected every (e.g. 30m) or cron (e.g. "0 9 * * 1-5")' });
    refineRecurrence(h, ctx);
  });
export type HeartbeatSettings = z.infer<typeof HeartbeatSettings>;

/** Whether two rules fire at the same times. */
export function sameRecurrence(a: Recurrence | null, b: Recurrence | null): boolean {
  if (a === null || b === null) return a === b;
  if ('every' in a) return 'every' in b && a.every === b.every;
  return 'cron' in b && a.cron === b.cron && a.timezone === b.timezone;
}
