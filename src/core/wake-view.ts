/**
 * The wake queue for people (`openboa wakes`): every revisit ever scheduled
 * with its fate — pending, due, consumed (by which run) or cancelled (why) —
 * plus any line of the queue that could not be read.
 *
 * Which revisits are still pending is the fold's word, not this view's: a run
 * takes a revisit in its session.status_running before it writes the
 * wake.consumed record, so after a crash in between the queue alone would
 * call it pending while the session (the fold) knows it was taken. The view
 * lists the records; the snapshot decides what is pending.
 */
import type { ParsedWakeLine } from './store/parse-line.js';
import type { SessionSnapshot, WakeSource } from './schema/index.js';

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
  /** The run that consumed it. */
  wake_run_id: string | null;
  cancel_reason: string | null;
  /** due_at derived from delay_seconds at read time, not yet pinned by the runtime. */
  provisional: boolean;
}

export function viewWakes(lines: readonly ParsedWakeLine[], nowMs: number, snap: Pick<SessionSnapshot, 'pending_wakes' | 'last_wake_id'>) {
  const byId = new Map<string, WakeView>();
  const invalid: Array<{ line: number; message: string }> = [];
  for (const l of lines) {
    if (l.kind === 'blank') continue;
    if (l.kind === 'invalid') {
      invalid.push({ line: l.rejection.line, message: l.rejection.message });
      continue;
    }
    const r = l.record;
    if (r.type === 'wake.scheduled') {
      const prior = byId.get(r.id);
      if (prior) {
        if (prior.provisional && !r.provisional) Object.assign(prior, { due_at: r.due_at, provisional: false });
        continue;
      }
      byId.set(r.id, {
        id: r.id,
        line: l.line,
        due_at: r.due_at,
        reason: r.reason,
        source: r.source,
        created_at: r.created_at,
        retry_of: r.retry_of ?? null,
        state: 'pending',
        settled_at: null,
        wake_run_id: null,
        cancel_reason: null,
        provisional: r.provisional === true,
      });
      continue;
    }
    const w = byId.get(r.wake_id);
    if (!w || w.state === 'consumed' || w.state === 'cancelled') continue;
    w.settled_at = r.at;
    if (r.type === 'wake.consumed') {
      w.state = 'consumed';
      w.wake_run_id = r.wake_run_id;
    } else {
      w.state = 'cancelled';
      w.cancel_reason = r.reason;
    }
  }
  const wakes = [...byId.values()];
  const pending = new Map(snap.pending_wakes.map((p) => [p.id, p]));
  for (const w of wakes) {
    if (w.state !== 'pending') continue;
    const p = pending.get(w.id);
    if (!p) {
      // taken in by a run whose wake.consumed record is not written yet (it died in between)
      w.state = 'consumed';
      continue;
    }
    if (w.provisional && !p.provisional) Object.assign(w, { due_at: p.due_at, provisional: false });
    if (Date.parse(w.due_at) <= nowMs) w.state = 'due';
  }
  return { wakes, invalid };
}
