/**
 * The wake queue folded: what each record of wake-queue.jsonl does to the
 * revisit it names. This is the only place that decides it. The session's
 * fold (session.json's pending_wakes and counts) and the view for people
 * (wake-view.ts, `openboa wakes`) both feed the records through
 * applyWakeRecord, and a run's taking-in through takeWakes, so they cannot
 * disagree.
 *
 * A revisit is, at any moment, one of:
 * - pending: scheduled, and neither taken by a run nor settled;
 * - taken: listed by a run's session.status_running (`wakes`) whose
 *   wake.consumed record is not in the queue yet (a run takes its revisits
 *   in before it writes that record; a crash in between leaves it here);
 * - settled: a wake.consumed or wake.cancelled record named it while it was
 *   pending or taken. It is counted by that record's type.
 *
 * The rules, record by record:
 * - `wake.scheduled` with a new id: a pending revisit;
 * - with the id of a pending revisit: a pin: it fixes a provisional due time
 *   (the first pin wins) and otherwise changes nothing;
 * - with the id of a taken revisit: nothing;
 * - a pin of a revisit that is no longer pending (the id `wake_line_<N>` on a
 *   line other than N, which is how the runtime pins a hand-written delay):
 *   nothing. A pin written late, by a reader that had not seen the revisit
 *   run, must not bring it back;
 * - with any other id that was settled before: a new pending revisit (a line
 *   that schedules again is taken at its word);
 * - `wake.consumed` / `wake.cancelled` of a pending or taken revisit: it is
 *   settled; of anything else (including a hand-written revisit of a later
 *   line, which does not exist yet): nothing.
 *
 *
 * A recurring revisit (a `wake.scheduled` with `every` or `cron`) is one
 * pending entry whose due_at is its next firing; it stays pending until a
 * `wake.cancelled` names its own id. Each firing has an id of its own,
 * `<schedule id>@<due time>` (recurrence.ts), and is taken and settled like
 * a one-shot revisit under it:
 * - a run's take of a firing only marks it taken: while its current firing
 *   is taken, the schedule is not due (dueWakes, nextWakeAt);
 * - a `wake.consumed` / `wake.cancelled` of a firing at or after the
 *   schedule's due time, taken or not, settles it and moves the schedule on
 *   to its first firing after both the firing and the record's `at`, so
 *   firings missed meanwhile collapse into the one settled. Only records of
 *   the queue move a schedule, in the queue's order: a fold from scratch
 *   (which meets every take first) and one continued line by line agree;
 * - of an earlier firing: it only settles a take of it;
 * - a `wake.consumed` of the schedule's own id: nothing (firings are
 *   consumed, not schedules).
 *
 * The fold applies its journals in the order it reads them (new lines of
 * events.jsonl, then of wake-queue.jsonl), so a run's take may come before
 * or after the queue's records of the same revisit; the rules give the same
 * result either way for every record but one made by copying an id that
 * was settled already (a revisit scheduled twice under one id and taken
 * twice is, from scratch, taken once).
 */
import type { PendingWake, SessionSnapshot, WakeRecord } from '../schema/index.js';
import { iso } from '../foundation/clock.js';
import { firingId, nextFiring, parseFiringId } from '../schedule/recurrence.js';

/** The part of a snapshot the wake queue's fold owns. */
export type WakeQueueState = Pick<SessionSnapshot, 'pending_wakes' | 'wakes_taken' | 'wakes_consumed' | 'wakes_cancelled'>;

export function emptyWakeQueue(): WakeQueueState {
  return { pending_wakes: [], wakes_taken: [], wakes_consumed: 0, wakes_cancelled: 0 };
}

/** What one record did to the revisit it names. */
export type WakeChange =
  | { kind: 'scheduled'; wake: PendingWake }
  | { kind: 'pinned'; id: string; due_at: string }
  | { kind: 'settled'; id: string; as: 'consumed' | 'cancelled'; at: string; wake_run_id: string | null; reason: string | null; was_taken: boolean }
  | {
      /** A firing of the recurring revisit `id` (due at `due_at`) was consumed or cancelled. */
      kind: 'fired';
      id: string;
      due_at: string;
      as: 'consumed' | 'cancelled';
      at: string;
      wake_run_id: string | null;
      reason: string | null;
    }
  | {
      kind: 'unchanged';
      id: string;
      /** pending: already scheduled (and pinned); taken: a run took it in; late_pin: a pin of a revisit no longer pending; not_open: a settling record for nothing pending or taken. */
      why: 'pending' | 'taken' | 'late_pin' | 'not_open';
    };

const LINE_WAKE = /^wake_line_(\d+)$/;

/** The line of a hand-written revisit's id (`wake_line_<N>`), or null for any other id. */
function lineOf(id: string): number | null {
  const m = LINE_WAKE.exec(id);
  return m ? Number(m[1]) : null;
}

/** Applies one record of wake-queue.jsonl (at `line`). Mutates `q`; returns what it did. */
export function applyWakeRecord(q: WakeQueueState, r: WakeRecord, line: number): WakeChange {
  if (r.type === 'wake.scheduled') {
    if (q.wakes_taken.includes(r.id)) return { kind: 'unchanged', id: r.id, why: 'taken' };
    const existing = q.pending_wakes.find((w) => w.id === r.id);
    if (existing) {
      if (!existing.provisional || r.provisional) return { kind: 'unchanged', id: r.id, why: 'pending' };
      existing.due_at = r.due_at;
      existing.provisional = false;
      return { kind: 'pinned', id: r.id, due_at: r.due_at };
    }
    const of = lineOf(r.id);
    if (of !== null && of !== line) return { kind: 'unchanged', id: r.id, why: 'late_pin' };
    const wake: PendingWake = {
      id: r.id,
      due_at: r.due_at,
      reason: r.reason,
      source: r.source,
      created_at: r.created_at,
      line,
      retry_of: r.retry_of ?? null,
      attempt: r.attempt ?? 0,
      provisional: r.provisional === true,
      recurrence: r.recurrence ?? null,
    };
    q.pending_wakes.push(wake);
    return { kind: 'scheduled', wake };
  }
  const id = r.wake_id;
  // A record cannot name a hand-written revisit of a later line: that revisit does not exist yet.
  // (Read first, a run's take of it would otherwise make this record settle it.)
  if ((lineOf(id) ?? 0) > line) return { kind: 'unchanged', id, why: 'not_open' };
  const as = r.type === 'wake.consumed' ? 'consumed' : 'cancelled';
  const wake_run_id = r.type === 'wake.consumed' ? r.wake_run_id : null;
  const reason = r.type === 'wake.cancelled' ? r.reason : null;
  const pending = q.pending_wakes.findIndex((w) => w.id === id);
  const taken = pending >= 0 ? -1 : q.wakes_taken.indexOf(id);
  const firing = parseFiringId(id);
  if (firing) {
    const schedule = q.pending_wakes.find((w) => w.id === firing.scheduleId && w.recurrence !== null);
    const current = schedule !== undefined && firing.dueMs >= Date.parse(schedule.due_at);
    if (!current && taken < 0) return { kind: 'unchanged', id, why: 'not_open' };
    if (taken >= 0) q.wakes_taken.splice(taken, 1);
    if (current) moveOn(q, schedule, firing.dueMs, Date.parse(r.at));
    count(q, as);
    return { kind: 'fired', id: firing.scheduleId, due_at: firing.dueAt, as, at: r.at, wake_run_id, reason };
  }
  if (pending < 0 && taken < 0) return { kind: 'unchanged', id, why: 'not_open' };
  // A schedule's own id: cancelling it stops every firing to come; it is never consumed (its firings are).
  if (pending >= 0 && q.pending_wakes[pending]?.recurrence && r.type === 'wake.consumed') return { kind: 'unchanged', id, why: 'not_open' };
  if (pending >= 0) q.pending_wakes.splice(pending, 1);
  else q.wakes_taken.splice(taken, 1);
  count(q, as);
  return { kind: 'settled', id, as, at: r.at, wake_run_id, reason, was_taken: taken >= 0 };
}

/**
 * A run took these revisits in (its session.status_running's `wakes`): they
 * leave pending at once, and are taken until their wake.consumed record; a
 * recurring one's firing is taken, the schedule stays (see above).
 * Mutates `q`.
 */
export function takeWakes(q: WakeQueueState, ids: readonly string[]): void {
  for (const id of ids) {
    const i = q.pending_wakes.findIndex((w) => w.id === id);
    // A schedule is never taken, only its firings are.
    if (i >= 0 && q.pending_wakes[i]?.recurrence) continue;
    if (i >= 0) q.pending_wakes.splice(i, 1);
    if (!q.wakes_taken.includes(id)) q.wakes_taken.push(id);
  }
}

/** The id a run takes a pending revisit in under: its own, or for a recurring one its next firing's. */
export function takenId(w: PendingWake): string {
  return w.recurrence ? firingId(w.id, w.due_at) : w.id;
}

/** A recurring revisit's firing at `firingMs` is done with (taken or settled at `atMs`): on to the next, or gone when there is none. */
function moveOn(q: WakeQueueState, schedule: PendingWake, firingMs: number, atMs: number): void {
  const next = schedule.recurrence ? nextFiring(schedule.recurrence, firingMs, Number.isFinite(atMs) ? atMs : firingMs) : null;
  if (next === null) q.pending_wakes.splice(q.pending_wakes.indexOf(schedule), 1);
  else schedule.due_at = iso(next);
}

function count(q: WakeQueueState, as: 'consumed' | 'cancelled'): void {
  if (as === 'consumed') q.wakes_consumed += 1;
  else q.wakes_cancelled += 1;
}

/**
 * The pending revisits that have a due time: all but a recurring one whose
 * current firing a run took in without its record yet (a crash between the
 * two: the next run writes the record, and the schedule moves on then).
 */
export function timedWakes(q: Pick<WakeQueueState, 'pending_wakes' | 'wakes_taken'>): PendingWake[] {
  if (q.wakes_taken.length === 0) return q.pending_wakes;
  return q.pending_wakes.filter((w) => !w.recurrence || !q.wakes_taken.includes(takenId(w)));
}

/** The earliest due time of the pending revisits, or null. */
export function nextWakeAt(q: Pick<WakeQueueState, 'pending_wakes' | 'wakes_taken'>): string | null {
  let min: string | null = null;
  for (const w of timedWakes(q)) if (min === null || Date.parse(w.due_at) < Date.parse(min)) min = w.due_at;
  return min;
}

/** The pending revisits due at `nowMs`. */
export function dueWakes(q: Pick<WakeQueueState, 'pending_wakes' | 'wakes_taken'>, nowMs: number): PendingWake[] {
  return timedWakes(q).filter((w) => Date.parse(w.due_at) <= nowMs);
}
