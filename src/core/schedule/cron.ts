/**
 * Cron expressions of recurring revisits (docs/format.md, "Recurring
 * revisits"), read by croner: a maintained parser with time zones, daylight
 * saving time and the usual extensions (L, #, W, names), which a home-made
 * parser would get wrong at the edges. Nothing here arms a timer: croner is
 * asked for the next occurrence after a given moment, and the daemon's one
 * timer does the waiting.
 *
 * Accepted: five fields (minute hour day-of-month month day-of-week), or one
 * of the nicknames below. Croner also reads a seconds field and a year field;
 * they are refused, so no schedule fires more often than once a minute and
 * every expression means the same thing to every cron-literate reader.
 * Without a time zone, an expression is read in UTC, never in the local
 * zone of whichever machine folds the log.
 */
import { Cron } from 'croner';

export const CRON_NICKNAMES = ['@yearly', '@annually', '@monthly', '@weekly', '@daily', '@hourly'] as const;
export const DEFAULT_TIMEZONE = 'UTC';
const EXPECTED_CRON = 'expected 5 fields (minute hour day-of-month month day-of-week), e.g. "0 9 * * 1-5", or one of ' + CRON_NICKNAMES.join(', ');

/** Compiled expressions by "expression\0zone" (a session's schedules are few; the bound only caps a long daemon's memory). */
const compiled = new Map<string, Cron>();

/** Given no function to run, croner arms no timer: the job only answers nextRun. */
function compile(expr: string, timezone: string): Cron {
  const key = `${expr}\0${timezone}`;
  let job = compiled.get(key);
  if (!job) {
    job = new Cron(expr, { timezone });
    if (compiled.size >= 256) compiled.delete(compiled.keys().next().value as string);
    compiled.set(key, job);
  }
  return job;
}

/** The expression as compiled: trimmed, fields one space apart, a nickname in lower case. */
function normal(expr: string): string {
  const t = expr.trim().replace(/\s+/g, ' ');
  return t.startsWith('@') ? t.toLowerCase() : t;
}

/** Why `tz` is not an IANA time zone this runtime knows (e.g. Europe/Berlin, UTC), or null. */
export function timezoneProblem(tz: string): string | null {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return null;
  } catch {
    return `"${tz}" is not a time zone (expected an IANA name such as Europe/Berlin or UTC)`;
  }
}

/** Why `expr` (read in `timezone`) cannot be a recurring revisit's rule, or null. */
export function cronProblem(expr: string, timezone: string = DEFAULT_TIMEZONE): string | null {
  const t = normal(expr);
  if (t.startsWith('@') ? !(CRON_NICKNAMES as readonly string[]).includes(t) : t.split(' ').length !== 5) return `"${expr}": ${EXPECTED_CRON}`;
  const tz = timezoneProblem(timezone);
  if (tz) return tz;
  let job: Cron;
  try {
    job = compile(t, timezone);
  } catch (e) {
    return `"${expr}": ${(e as Error).message}`;
  }
  // A fixed reference, so the answer does not depend on when it is asked: an expression that never fires (30 February) is refused.
  // croner searches month by month, recursively, up to the year 3000: for one that never fires in several months
  // (31 February, April, ...) the search overflows the stack instead, and that answer is the same.
  let next: Date | null;
  try {
    next = job.nextRun(new Date(Date.UTC(2000, 0, 1)));
  } catch {
    next = null;
  }
  if (next === null) return `"${expr}" never fires`;
  return null;
}

/** How far cronNext looks on, a minute (cron's grain) at a time, past an answer of croner's that is not after the moment asked (see there): 4 hours. */
const BACKWARD_STEP_MS = 60_000;
const BACKWARD_STEPS = 4 * 60;

/**
 * The first occurrence of `expr` strictly after `afterMs` (whole seconds),
 * or null when there is none. Throws on an expression cronProblem refuses.
 *
 * croner (9.1) answers an occurrence before the moment it is given when that
 * moment falls in the hour repeated as a zone west of UTC puts its clocks
 * back (asked at the second 01:02 in New York, it answers 01:05 of the first
 * pass, an hour earlier). A schedule would then fall due in the past, fire
 * at once, and again after each run, for that hour. Such an answer is asked
 * again from a minute later, and so on (no zone shifts by more than two
 * hours), so the rest of the repeated hour is skipped, as croner's own
 * stepping from the first pass skips it, and the first occurrence after it
 * is the answer.
 */
export function cronNext(expr: string, timezone: string, afterMs: number): number | null {
  const job = compile(normal(expr), timezone);
  for (let i = 0, from = afterMs; i < BACKWARD_STEPS; i++, from += BACKWARD_STEP_MS) {
    const next = job.nextRun(new Date(from));
    if (next === null) return null;
    if (next.getTime() > afterMs) return next.getTime();
  }
  return null;
}
