/**
 * When a recurring revisit fires, computed from its rule and the log alone,
 * never from a clock (docs/format.md, "Recurring revisits").
 *
 * A schedule's firings are named `<schedule id>@<due time>`: a run takes a
 * firing in under that id and consumes it, like any revisit. Its next firing
 * is the first occurrence of the rule strictly after both the firing and the
 * moment it was settled (its wake.consumed or wake.cancelled record's `at`,
 * wake-queue-fold.ts): so firings missed while nothing ran (no daemon, a
 * session busy or waiting on a person, paused) collapse into the one that
 * runs, and the schedule goes on from the present.
 *
 * `every` schedules stay aligned to their first firing (a firing late by a
 * minute does not shift the next ones); cron ones follow the expression.
 */
import { iso } from '../foundation/clock.js';
import { cronNext } from './cron.js';
import type { Recurrence } from '../schema/index.js';

/** The first firing of a schedule whose line says `due_at`: that moment for `every`, the first occurrence at or after it for cron. Null: a cron that never fires again. */
export function firstFiring(rule: Recurrence, dueAtMs: number): number | null {
  return 'every' in rule ? dueAtMs : cronNext(rule.cron, rule.timezone, dueAtMs - 1);
}

/**
 * The first firing of a schedule made at `nowMs`: at `startMs` when one is
 * given (for cron, the first occurrence at or after it), else one period
 * from now (`every`) or the next occurrence (cron). Null: a cron that never
 * fires again.
 */
export function firstFiringFrom(rule: Recurrence, nowMs: number, startMs?: number): number | null {
  return firstFiring(rule, startMs ?? ('every' in rule ? nowMs + rule.every * 1000 : nowMs));
}

/** The firing after the one due at `firingMs`, strictly after `afterMs` too; null when the rule has no more. */
export function nextFiring(rule: Recurrence, firingMs: number, afterMs: number): number | null {
  const after = Math.max(firingMs, afterMs);
  if ('cron' in rule) return cronNext(rule.cron, rule.timezone, after);
  const period = rule.every * 1000;
  return firingMs + (Math.floor((after - firingMs) / period) + 1) * period;
}

/** The id of a schedule's firing due at `dueAt` (an ISO time as the fold writes it). */
export function firingId(scheduleId: string, dueAt: string): string {
  return `${scheduleId}@${dueAt}`;
}

/** The schedule and due time a firing id names, or null for any other id. */
export function parseFiringId(id: string): { scheduleId: string; dueAt: string; dueMs: number } | null {
  const at = id.lastIndexOf('@');
  if (at <= 0) return null;
  const dueAt = id.slice(at + 1);
  const dueMs = Date.parse(dueAt);
  if (!Number.isFinite(dueMs) || iso(dueMs) !== dueAt) return null;
  return { scheduleId: id.slice(0, at), dueAt, dueMs };
}

const UNITS: Array<[string, number]> = [
  ['d', 86_400],
  ['h', 3_600],
  ['m', 60],
  ['s', 1],
];

/** "every 1h30m", "cron 0 9 * * 1-5 (Europe/Berlin)": the rule in a few words, for people and the agent. */
export function describeRecurrence(rule: Recurrence): string {
  if ('cron' in rule) return `cron ${rule.cron} (${rule.timezone})`;
  let rest = rule.every;
  let text = '';
  for (const [unit, size] of UNITS) {
    if (rest >= size) {
      text += `${Math.floor(rest / size)}${unit}`;
      rest %= size;
    }
  }
  return `every ${text}`;
}
