/**
 * Versions of events.jsonl, and how an old line is read today.
 *
 * A log's format is the `format` of its first line (the session.created
 * the runtime writes carries LOG_FORMAT); a first line without one is
 * format 0, the logs written before formats were numbered. The file is never
 * rewritten to a newer format: each line is brought up to LOG_FORMAT as it
 * is parsed (parse-line.ts), by the pure steps below, before the schema
 * judges it. So a log reads the same whichever version of openboa wrote
 * which of its lines, and the file stays as it was written.
 *
 * A log whose format is newer than LOG_FORMAT (written by a newer openboa),
 * or whose `format` is not a format at all, is not read: reading it with
 * today's rules could misread it, and a run would then append lines of the
 * wrong format to it. logFormatOf throws `unsupported_log_format` instead.
 *
 * Every line of a log is in the log's format, the one its first line names:
 * a writer appends to an older log in that log's format, never in a newer
 * one (a line in a newer format would be migrated again on read, and an
 * older openboa would misread it). Today the two formats write the same
 * lines, so this holds by itself. A format whose lines differ must come with
 * a writer for the older formats it appends to (the inverse of its step),
 * or have appendEvents refuse a log of an older format.
 *
 * Adding a format: raise LOG_FORMAT in the schema (events.ts), append the
 * step from the previous format to STEPS, keep the rule above, and describe
 * it in docs/format.md.
 * A step takes one event object as parsed from JSON (nothing filled in yet:
 * a hand-written line may lack `id`, `created_at`, even `type`) and returns
 * it as the next format would have written it; it must not throw, and it
 * returns its input unchanged when the line is not one it changes.
 */
import { LOG_FORMAT } from '../schema/format-constants.js';
import { unsupportedLogFormat } from '../foundation/errors.js';

/** One event object as parsed from a line (a JSON object, not yet validated). */
export type EventObject = Record<string, unknown>;

/** Takes an event object of format N to format N + 1. Pure; never throws. */
export type MigrationStep = (event: EventObject) => EventObject;

/**
 * STEPS[n] takes format n to n + 1.
 *
 * 0 → 1: the identity. Format 1 only names the format: a format-0 log is
 * every log written before numbering, and its lines mean what format 1's
 * lines mean. (Its first line is not given a `format` either: a format-0
 * log reads exactly as it did.)
 */
export const STEPS: readonly MigrationStep[] = [(event) => event];
// (one step per format before LOG_FORMAT: tests/core/log-format.test.ts checks the count)

/**
 * `event`, a line of a log of format `fromFormat`, as LOG_FORMAT reads it.
 * `steps` is for tests of the mechanism; callers use the default.
 */
export function migrateEvent(event: EventObject, fromFormat: number, steps: readonly MigrationStep[] = STEPS): EventObject {
  let e = event;
  for (let f = fromFormat; f < steps.length; f++) e = (steps[f] as MigrationStep)(e);
  return e;
}

/**
 * The format of a log whose first line is `firstLine` (null: none complete
 * yet). A first line that is not a JSON object, or has no `format`, is
 * format 0: it is then judged as any line is (and reported if bad). Throws
 * unsupported_log_format for a format newer than `supported`, or a `format`
 * that is not a whole number; `where` names the log in the message.
 */
export function logFormatOf(firstLine: string | null, where: string, supported = LOG_FORMAT): number {
  if (firstLine === null) return 0;
  let v: unknown;
  try {
    v = JSON.parse(firstLine);
  } catch {
    return 0;
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v) || !('format' in v)) return 0;
  const f = (v as { format: unknown }).format;
  if (typeof f === 'number' && Number.isSafeInteger(f) && f >= 0 && f <= supported) return f;
  if (typeof f === 'number' && Number.isSafeInteger(f) && f > supported) {
    throw unsupportedLogFormat(`${where} is in log format ${f}, newer than this version of openboa reads (formats 0 to ${supported}); it is left as it is and not run`, f, supported);
  }
  const shown = JSON.stringify(f) ?? String(f);
  throw unsupportedLogFormat(`${where}: the first line's format ${shown} is not a log format (expected a whole number from 0 to ${supported}); the log is left as it is and not run`, shown, supported);
}
