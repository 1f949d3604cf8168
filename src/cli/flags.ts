/**
 * Values of command-line flags, checked up front with our own one-line
 * message: the flag, what it got, what was expected (exit 2 through
 * UsageError). Never Node's wording, never a stack.
 */
import { UsageError, type Flags } from './command.js';
import { EXPECTED_DURATION, parseDuration } from '../core/schedule/duration.js';

const WHOLE = /^\d+$/;

/**
 * The flag as a whole number >= min (undefined when not given). Only plain
 * digits count: "", "1e3", "0x10", "+5" and "5.0" are refused rather than
 * read the way Number() would.
 */
export function wholeNumberFlag(flags: Flags, name: string, o: { min?: number; max?: number; example?: number } = {}): number | undefined {
  const raw = flags[name];
  if (raw === undefined) return undefined;
  const min = o.min ?? 0;
  const expected = `expected a whole number${min > 0 ? ` >= ${min}` : ''}${o.max !== undefined ? ` and <= ${o.max}` : ''}, e.g. --${name} ${o.example ?? Math.max(min, 10)}`;
  if (typeof raw !== 'string' || !WHOLE.test(raw)) throw new UsageError(`--${name} "${String(raw)}" is not a whole number (${expected})`);
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < min || (o.max !== undefined && n > o.max)) throw new UsageError(`--${name} ${raw} is out of range (${expected})`);
  return n;
}

/** One of `choices` (undefined when not given); the message lists them. */
export function choiceFlag<T extends string>(flags: Flags, name: string, choices: readonly T[]): T | undefined {
  const raw = flags[name];
  if (raw === undefined) return undefined;
  if (typeof raw === 'string' && (choices as readonly string[]).includes(raw)) return raw as T;
  throw new UsageError(`--${name} "${String(raw)}" is not one of ${choices.join(', ')}`);
}

/** The flag as a duration in milliseconds (undefined when not given). How long is too long is the caller's to say. */
export function durationFlag(flags: Flags, name: string): number | undefined {
  const raw = flags[name];
  if (raw === undefined) return undefined;
  const ms = typeof raw === 'string' ? parseDuration(raw) : null;
  if (ms === null) throw new UsageError(`--${name} "${String(raw)}" is not a duration (${EXPECTED_DURATION})`);
  return ms;
}
