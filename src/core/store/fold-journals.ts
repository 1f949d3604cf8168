/**
 * Reading the two journals into a snapshot: events.jsonl from the cursor
 * the base snapshot stops at (or line 1), then wake-queue.jsonl, each line
 * parsed in the log's format and folded (fold.ts, wake-queue-fold.ts). Reads
 * the files, never writes them; SessionStore decides what to keep.
 */
import { iso } from '../foundation/clock.js';
import type { SessionPaths } from '../foundation/home.js';
import type { SessionSnapshot } from '../schema/index.js';
import { applyEvent, applyRejection, emptySnapshot, finishFold, type RunVerifier } from './fold.js';
import { readLines } from './jsonl.js';
import { parseEventLine, parseWakeLine } from './parse-line.js';
import { applyWakeRecord } from './wake-queue-fold.js';

export interface JournalFoldInput {
  sessionId: string;
  paths: SessionPaths;
  now: number;
  /** The log's format, read from its first line (once per file: a continued fold keeps the format it read). */
  format(): number;
  /** The run-proof check for a fold that trusts the first `trusted` lines (judged by an earlier fold). */
  verify(trusted: number): RunVerifier;
}

/**
 * Folds the journals onto `base` (mutated and returned) or from scratch. A
 * journal replaced since the base's cursor (another inode, or shorter) is
 * folded from scratch. `slice.eventsUntil`: events up to that byte only, and
 * not the queue (snapshotAsync folds a huge log a slice at a time; the
 * queue's records may settle revisits that later events take in).
 */
export function foldJournals(x: JournalFoldInput, base: SessionSnapshot | null, slice: { eventsUntil?: number } = {}): SessionSnapshot {
  const known = base && base.journals.events.line > 0 ? base.log_format : undefined;
  const format = known ?? x.format();
  let s: SessionSnapshot = base ?? emptySnapshot(x.sessionId, iso(x.now));
  s.log_format = format;
  const trusted = base ? s.journals.events.line : 0; // lines a fold judged before this one
  const ev = readLines(x.paths.events, s.journals.events, slice.eventsUntil !== undefined ? { until: slice.eventsUntil } : {});
  const verify = x.verify(trusted);
  if (ev.reset && base) return foldJournals(x, null, slice);
  let offset = s.journals.events.offset;
  for (const raw of ev.lines) {
    const r = parseEventLine(raw, x.now, format);
    if (r.kind === 'event') applyEvent(s, r.event, r.line, r.readTime === true, verify, ev.reset ? undefined : offset);
    else if (r.kind === 'invalid') applyRejection(s, 'events.jsonl', r.rejection);
    offset += raw.bytes + 1;
  }
  s.journals.events = ev.cursor;
  s.held_back = { events: ev.heldBack, wake_queue: 0 };
  if (slice.eventsUntil !== undefined) return s;
  const wq = readLines(x.paths.wakeQueue, s.journals.wake_queue);
  if (wq.reset && base) return foldJournals(x, null);
  for (const raw of wq.lines) {
    const r = parseWakeLine(raw, x.now);
    if (r.kind === 'wake') applyWakeRecord(s, r.record, r.line);
    else if (r.kind === 'invalid') applyRejection(s, 'wake-queue.jsonl', r.rejection);
  }
  s.journals.wake_queue = wq.cursor;
  s.held_back.wake_queue = wq.heldBack;
  finishFold(s);
  if (s.agent_id === 'unknown') {
    // No session.created: keep going (its bad first line is reported), but say so.
    s = { ...s, title: s.title ?? '(events.jsonl does not start with session.created)' };
  }
  return s;
}
