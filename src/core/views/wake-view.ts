/**
 * The wake queue for people (`openboa wakes`): every revisit ever scheduled
 * with its fate — pending, due, consumed (by which run) or cancelled (why) —
 * plus any line of the queue that could not be read.
 *
 * The view is the session's own fold, watched: it feeds the queue's lines
 * through the same reducer (applyWakeRecord, wake-queue-fold.ts), and only
 * lists what each record did. What a run took in comes from the snapshot
 * (`wakes_taken`: taken, with no wake.consumed record yet; a run takes a
 * revisit in before it writes that record, and may die in between), and the
 * lines are read no further than the snapshot's cursor, so the revisits the
 * view calls pending are exactly the snapshot's. The snapshot also gives
 * each pending revisit's due time, which for a hand-written delay not yet
 * pinned is the moment the fold first read it, and for a recurring one its
 * next firing. A recurring revisit is one row, with its rule, how many of
 * its firings were consumed and the last of them; its firings have no rows
 * of their own (one a minute would bury everything else).
 */
import type { ParsedWakeLine } from '../store/parse-line.js';
import { applyWakeRecord, emptyWakeQueue } from '../store/wake-queue-fold.js';
import type { Recurrence, SessionSnapshot, WakeSource } from '../schema/index.js';
import { parseFiringId } from '../schedule/recurrence.js';

export interface WakeView {
  id: string;
  line: number;
  due_at: string;
  reason: string;
  source: WakeSource;
  created_at: string;
  retry_of: string | null;
  state: 'pending' | 'due' | 'consumed' | 'cancelled';
  /** When it was consumed or cancelled. */
  settled_at: string | null;
  /** The run that consumed it (null when a run took it in and died before its record). */
  wake_run_id: string | null;
  cancel_reason: string | null;
  /** due_at derived from delay_seconds at read time, not yet pinned by the runtime. */
  provisional: boolean;
  /** A recurring revisit's rule (due_at is then its next firing); null for a one-shot. */
  recurrence: Recurrence | null;
  /** A recurring revisit's firings consumed so far. */
  firings: number;
  /** Its latest firing settled or taken: when it was due, consumed or cancelled (skipped), when, by which run (null: taken by a run that died before its record). */
  last_firing: { due_at: string; as: 'consumed' | 'cancelled'; at: string | null; wake_run_id: string | null } | null;
}

export function viewWakes(lines: readonly ParsedWakeLine[], nowMs: number, snap: Pick<SessionSnapshot, 'pending_wakes' | 'wakes_taken' | 'journals'>) {
  const q = emptyWakeQueue();
  q.wakes_taken = [...snap.wakes_taken];
  const wakes: WakeView[] = [];
  /** The latest row of each id (an id settled and then scheduled again has two). */
  const rows = new Map<string, WakeView>();
  const invalid: Array<{ line: number; message: string }> = [];
  const through = snap.journals.wake_queue.line;
  for (const l of lines) {
    // Lines appended after the snapshot was taken are not folded yet: the next look shows them.
    if ((l.kind === 'invalid' ? l.rejection.line : l.line) > through) break;
    if (l.kind === 'blank') continue;
    if (l.kind === 'invalid') {
      invalid.push({ line: l.rejection.line, message: l.rejection.message });
      continue;
    }
    const r = l.record;
    const change = applyWakeRecord(q, r, l.line);
    switch (change.kind) {
      case 'scheduled': {
        const w = change.wake;
        const row: WakeView = {
          id: w.id,
          line: w.line,
          due_at: w.due_at,
          reason: w.reason,
          source: w.source,
          created_at: w.created_at,
          retry_of: w.retry_of,
          state: 'pending',
          settled_at: null,
          wake_run_id: null,
          cancel_reason: null,
          provisional: w.provisional,
          recurrence: w.recurrence,
          firings: 0,
          last_firing: null,
        };
        wakes.push(row);
        rows.set(w.id, row);
        break;
      }
      case 'pinned':
        Object.assign(rows.get(change.id) ?? {}, { due_at: change.due_at, provisional: false });
        break;
      case 'settled': {
        const row = rows.get(change.id);
        if (row) Object.assign(row, { state: change.as, settled_at: change.at, wake_run_id: change.wake_run_id, cancel_reason: change.reason });
        break;
      }
      case 'fired': {
        const row = rows.get(change.id);
        if (!row) break;
        if (change.as === 'consumed') row.firings += 1;
        row.last_firing = { due_at: change.due_at, as: change.as, at: change.at, wake_run_id: change.wake_run_id };
        break;
      }
      case 'unchanged':
        // A revisit a run took in (its record not written yet) is shown as consumed, by no run the queue names.
        if (change.why === 'taken' && r.type === 'wake.scheduled' && !rows.has(r.id)) {
          const row: WakeView = {
            id: r.id,
            line: l.line,
            due_at: r.due_at,
            reason: r.reason,
            source: r.source,
            created_at: r.created_at,
            retry_of: r.retry_of ?? null,
            state: 'consumed',
            settled_at: null,
            wake_run_id: null,
            cancel_reason: null,
            provisional: r.provisional === true,
            recurrence: r.recurrence ?? null,
            firings: 0,
            last_firing: null,
          };
          wakes.push(row);
          rows.set(r.id, row);
        }
        break;
    }
  }
  // A firing a run took in whose record is not written yet (the run died first) counts, by no run the queue names.
  for (const id of snap.wakes_taken) {
    const f = parseFiringId(id);
    const row = f && rows.get(f.scheduleId);
    if (!f || !row?.recurrence || (row.last_firing && Date.parse(row.last_firing.due_at) >= f.dueMs)) continue;
    row.firings += 1;
    row.last_firing = { due_at: f.dueAt, as: 'consumed', at: null, wake_run_id: null };
  }
  const pending = new Map(snap.pending_wakes.map((p) => [p.id, p]));
  for (const w of wakes) {
    if (w.state !== 'pending') continue;
    const p = pending.get(w.id);
    if (p) Object.assign(w, { due_at: p.due_at, provisional: p.provisional });
    if (Date.parse(w.due_at) <= nowMs) w.state = 'due';
  }
  return { wakes, invalid };
}
