/**
 * Turns one raw journal line into either a normalised record or a readable
 * rejection. Never throws: a bad line is data (SPEC invariant 1), reported
 * with its line number and, for schema errors, the field path.
 */
import * as z from 'zod';
import {
  looseEventSchema,
  LOG_FORMAT,
  EVENT_TYPES,
  USER_EVENT_TYPES,
  WakeCancelled,
  WakeConsumed,
  WakeScheduled,
  WakeShorthand,
  isEventType,
  recurrenceOf,
  type SessionEvent,
  type WakeRecord,
  type WakeSource,
} from '../schema/index.js';
import { lineEventId, lineWakeId } from '../foundation/ids.js';
import { migrateEvent } from './migrations.js';
import { iso } from '../foundation/clock.js';
import { firstFiring } from '../schedule/recurrence.js';
import { cutHead } from '../foundation/text-cut.js';
import type { RawLine } from './jsonl.js';

export interface LineRejection {
  line: number;
  /** invalid_event, invalid_wake, or invalid_answer (a user event that answers nothing). */
  code: string;
  message: string;
  /** The id the line carried, when it had a readable one. */
  eventId: string | null;
}

export type ParsedEventLine =
  | {
      kind: 'event';
      line: number;
      event: SessionEvent;
      /** The line had no created_at: the event's is the moment it was read (pinned by the fold; see SessionStore.readEvents). */
      readTime?: true;
    }
  | { kind: 'blank'; line: number }
  | { kind: 'invalid'; rejection: LineRejection };

export type ParsedWakeLine =
  | { kind: 'wake'; line: number; record: WakeRecord }
  | { kind: 'blank'; line: number }
  | { kind: 'invalid'; rejection: LineRejection };

const EXCERPT = 120;

function excerpt(text: string): string {
  const t = text.length > EXCERPT ? `${cutHead(text, EXCERPT)}… (${text.length} chars)` : text;
  return JSON.stringify(t);
}

/** zod issues as "field.path: message; ..." — one line, every issue. */
export function describeIssues(error: z.ZodError): string {
  // The first two issues say what to fix; a long list (a union's every branch) only buries them.
  const shown = error.issues.slice(0, 2).map((i) => {
    const where = i.path.length ? i.path.map(String).join('.') : '(root)';
    const msg = i.message.length > 160 ? `${i.message.slice(0, 159)}…` : i.message;
    return `${where}: ${msg}`;
  });
  const more = error.issues.length - shown.length;
  return shown.join('; ') + (more > 0 ? ` (and ${more} more)` : '');
}

/** The known type closest to `t` (at most 3 edits away), for "did you mean". */
function closest(t: string, known: readonly string[]): string | null {
  let best: string | null = null;
  let bestD = 4;
  for (const k of known) {
    const d = editDistance(t, k, bestD);
    if (d < bestD) [best, bestD] = [k, d];
  }
  return best;
}

/** Levenshtein distance, giving up (returning `cap`) once it cannot be below `cap`. */
function editDistance(a: string, b: string, cap: number): number {
  if (Math.abs(a.length - b.length) >= cap) return cap;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min((prev[j] as number) + 1, (cur[j - 1] as number) + 1, (prev[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1));
      rowMin = Math.min(rowMin, cur[j] as number);
    }
    if (rowMin >= cap) return cap;
    prev = cur;
  }
  return prev[b.length] as number;
}

type Json = { ok: true; value: Record<string, unknown> } | { ok: false; message: string };

/**
 * How deeply a line's JSON may nest (the line's own object is level 1). JSON.parse
 * itself copes with any depth, but everything after it walks values by
 * recursion: JSON.stringify (token estimates, the request body), zod,
 * structuredClone, the redactor. V8's default stack ends near 5,000 levels,
 * less when the walk starts deep in a call stack, and a line deeper than that
 * would make every later run fail before its model request. An event's own
 * structure takes at most 4 levels (event, content, block, source); 64 leaves
 * a tool input or an image source some 60 levels of its own, more than any
 * real one uses, while every walker stays nearly two orders of magnitude from the
 * stack's end. The runtime's own lines obey the same limit when read back:
 * a model's tool input nested deeper would be reported as a bad line.
 */
export const MAX_JSON_DEPTH = 64;

/** Path components shown when a line is too deep; the rest is elided. */
const PATH_SHOWN = 12;

/**
 * The path to the first value nested deeper than `limit`, or null when the
 * value is within it. Iterative (an explicit stack, never recursion), so its
 * own depth costs heap, not stack; the stack of frames is the path.
 */
export function pathTooDeep(root: unknown, limit = MAX_JSON_DEPTH): string[] | null {
  if (root === null || typeof root !== 'object') return null;
  type Frame = { v: object; keys: string[] | null; i: number; n: number };
  const frame = (v: object): Frame => {
    const keys = Array.isArray(v) ? null : Object.keys(v);
    return { v, keys, i: 0, n: keys ? keys.length : (v as unknown[]).length };
  };
  const stack: Frame[] = [frame(root)];
  while (stack.length > 0) {
    const top = stack[stack.length - 1] as Frame;
    if (top.i >= top.n) {
      stack.pop();
      continue;
    }
    const k = top.keys ? (top.keys[top.i] as string) : top.i;
    top.i += 1;
    const child = (top.v as Record<string | number, unknown>)[k];
    if (child === null || typeof child !== 'object') continue;
    if (stack.length >= limit) return stack.map((f) => String(f.keys ? f.keys[f.i - 1] : f.i - 1));
    stack.push(frame(child));
  }
  return null;
}

function describeDepth(path: string[]): string {
  const shown = path.slice(0, PATH_SHOWN).join('.');
  return path.length > PATH_SHOWN ? `${shown}.…` : shown;
}

function parseObject(raw: RawLine, file: string): Json {
  if (raw.oversize) {
    return { ok: false, message: `${file} line ${raw.no}: line is ${raw.bytes} bytes, over the limit; starts ${excerpt(raw.text)}` };
  }
  if (raw.badUtf8) return { ok: false, message: `${file} line ${raw.no}: not valid UTF-8` };
  let value: unknown;
  try {
    value = JSON.parse(raw.text);
  } catch (e) {
    return { ok: false, message: `${file} line ${raw.no}: not valid JSON (${(e as Error).message}): ${excerpt(raw.text)}` };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    const got = value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value;
    return { ok: false, message: `${file} line ${raw.no}: expected a JSON object, got ${got}` };
  }
  const deep = pathTooDeep(value);
  if (deep) {
    return { ok: false, message: `${file} line ${raw.no}: JSON nested more than ${MAX_JSON_DEPTH} levels deep (at ${describeDepth(deep)}); the limit is ${MAX_JSON_DEPTH}` };
  }
  return { ok: true, value: value as Record<string, unknown> };
}

function idOf(v: Record<string, unknown>, key = 'id'): string | null {
  return typeof v[key] === 'string' && v[key] !== '' ? (v[key] as string) : null;
}

/**
 * Parses a line of events.jsonl. A line without `id` gets `sevt_line_<N>`; a
 * line without `created_at` gets `readAtMs` (the moment it was read).
 * `logFormat` is the format of the log the line is in (SessionStore.logFormat;
 * default: the current one): the line is brought up to the current format
 * (migrations.ts) before the schema judges it.
 */
export function parseEventLine(raw: RawLine, readAtMs: number, logFormat: number = LOG_FORMAT): ParsedEventLine {
  if (raw.text.trim() === '' && !raw.oversize) return { kind: 'blank', line: raw.no };
  const fail = (message: string, eventId: string | null = null): ParsedEventLine => ({
    kind: 'invalid',
    rejection: { line: raw.no, code: 'invalid_event', message, eventId },
  });
  const j = parseObject(raw, 'events.jsonl');
  if (!j.ok) return fail(j.message);
  const v = migrateEvent(j.value, logFormat);
  const type = v.type;
  if (!isEventType(type)) {
    const guess = typeof type === 'string' ? closest(type, EVENT_TYPES) : null;
    const got = typeof type === 'string' ? `unknown event type "${type}"${guess ? ` (did you mean ${guess}?)` : ''}` : 'missing "type"';
    return fail(`events.jsonl line ${raw.no}: ${got}; people and programs write ${USER_EVENT_TYPES.join(', ')} (docs/format.md): ${excerpt(raw.text)}`, idOf(v));
  }
  const r = looseEventSchema(type).safeParse(v);
  if (!r.success) {
    return fail(`events.jsonl line ${raw.no}: ${type}: ${describeIssues(r.error)}; the line: ${excerpt(raw.text)}`, idOf(v));
  }
  const event = {
    ...r.data,
    id: r.data.id ?? lineEventId(raw.no),
    created_at: r.data.created_at ?? iso(readAtMs),
  } as SessionEvent;
  return { kind: 'event', line: raw.no, event, ...(r.data.created_at === undefined ? { readTime: true as const } : {}) };
}

/**
 * Parses a line of wake-queue.jsonl, including the hand-written shorthand
 * `{due_at | delay_seconds, reason}` (id `wake_line_<N>`).
 */
export function parseWakeLine(raw: RawLine, readAtMs: number): ParsedWakeLine {
  if (raw.text.trim() === '' && !raw.oversize) return { kind: 'blank', line: raw.no };
  const fail = (message: string, eventId: string | null = null): ParsedWakeLine => ({
    kind: 'invalid',
    rejection: { line: raw.no, code: 'invalid_wake', message, eventId },
  });
  const j = parseObject(raw, 'wake-queue.jsonl');
  if (!j.ok) return fail(j.message);
  const v = j.value;
  const where = `wake-queue.jsonl line ${raw.no}`;
  switch (v.type) {
    case undefined:
    case 'wake.scheduled': {
      const schema = v.type === undefined ? WakeShorthand : WakeScheduled;
      const r = schema.safeParse(v);
      if (!r.success) return fail(`${where}: ${v.type ?? 'wake shorthand'}: ${describeIssues(r.error)}`, idOf(v));
      const d = r.data;
      const provisional = d.due_at === undefined;
      let dueMs: number | null = provisional ? readAtMs + (d.delay_seconds ?? 0) * 1000 : Date.parse(d.due_at as string);
      if (!Number.isFinite(dueMs) || Math.abs(dueMs) > 8.64e15) return fail(`${where}: ${v.type ?? 'wake shorthand'}: due_at: not a time that exists`, idOf(v));
      const recurrence = recurrenceOf(d);
      if (recurrence) {
        dueMs = firstFiring(recurrence, dueMs);
        if (dueMs === null || Math.abs(dueMs) > 8.64e15) return fail(`${where}: ${v.type ?? 'wake shorthand'}: cron: "${d.cron}" never fires at or after ${d.due_at}`, idOf(v));
      }
      const source: WakeSource = d.source ?? 'hand';
      return {
        kind: 'wake',
        line: raw.no,
        record: {
          type: 'wake.scheduled',
          id: d.id ?? lineWakeId(raw.no),
          due_at: iso(dueMs),
          reason: d.reason,
          source,
          created_at: d.created_at ?? iso(readAtMs),
          retry_of: d.retry_of,
          attempt: d.attempt,
          wake_run_id: d.wake_run_id,
          ...(provisional ? { provisional: true } : {}),
          ...(recurrence ? { recurrence } : {}),
        },
      };
    }
    case 'wake.consumed': {
      const r = WakeConsumed.safeParse(v);
      if (!r.success) return fail(`${where}: wake.consumed: ${describeIssues(r.error)}`, idOf(v, 'wake_id'));
      return { kind: 'wake', line: raw.no, record: r.data };
    }
    case 'wake.cancelled': {
      const r = WakeCancelled.safeParse(v);
      if (!r.success) return fail(`${where}: wake.cancelled: ${describeIssues(r.error)}`, idOf(v, 'wake_id'));
      return { kind: 'wake', line: raw.no, record: r.data };
    }
    default:
      return fail(
        `${where}: unknown record type ${JSON.stringify(v.type)}; expected wake.scheduled, wake.consumed, wake.cancelled or the shorthand {due_at|delay_seconds, reason}`,
        idOf(v),
      );
  }
}
