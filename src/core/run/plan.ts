/**
 * What a session needs, decided from its snapshot alone: whether a run has
 * something to do now (and what it takes in), and when it next will. wake()
 * uses the first; the daemon uses both to queue runs and arm its timer.
 */
import type { PendingEvent, SessionSnapshot, Trigger } from '../schema/index.js';
import { isAnswerType, openActions } from '../store/answer-problem.js';
import { dueWakes, timedWakes } from '../store/wake-queue-fold.js';

/** What a run will take in, decided from the snapshot alone. */
export interface RunPlan {
  runnable: boolean;
  skipReason: string | null;
  trigger: Trigger;
  take: PendingEvent[];
  wakes: SessionSnapshot['pending_wakes'];
  interrupt: boolean;
  recovery: boolean;
}

export function planRun(s: SessionSnapshot, nowMs: number, opts: { trigger?: Trigger; retryNow?: boolean }): RunPlan {
  const skip = (why: string): RunPlan => ({ runnable: false, skipReason: why, trigger: opts.trigger ?? 'event', take: [], wakes: [], interrupt: false, recovery: false });
  if (s.status === 'terminated') return skip('terminated');
  if (s.archived_at !== null) return skip('archived');
  const recovery = s.status === 'running';
  const interrupt = s.pending_events.some((p) => p.type === 'user.interrupt');
  const open = openActions(s);
  const due = dueWakes(s, nowMs);
  let take: PendingEvent[];
  let wakes = due;
  // Paused: no run, except one for an interrupt, which is still honoured (and takes in nothing else).
  if (s.paused && !interrupt) return skip('paused');
  if (interrupt) {
    // An interrupt cancels every queued revisit, due ones included.
    take = s.paused ? s.pending_events.filter((p) => p.type === 'user.interrupt') : s.pending_events;
    wakes = [];
  } else if (open.length > 0) {
    // Still waiting on a person: take only the answers; messages and wakes wait.
    take = s.pending_events.filter((p) => isAnswerType(p.type));
    wakes = [];
  } else {
    take = s.pending_events;
  }
  const retryDue = s.status === 'rescheduling' && (s.retry_at === null || Date.parse(s.retry_at) <= nowMs || opts.trigger === 'manual' || opts.retryNow === true);
  const backingOff = s.status === 'rescheduling' && !retryDue;
  if (backingOff && !interrupt) return skip('rescheduled');
  const work = take.length > 0 || wakes.length > 0 || recovery || retryDue;
  if (!work) return skip(open.length > 0 ? 'requires_action' : 'nothing_pending');
  // A run that died is recovered; a run that failed and backed off is retried.
  const fromChildren = take.length > 0 && take.every((p) => p.type === 'agent.thread_message_received' || p.type === 'session.thread_status_idle');
  // After an interrupt the tree stays stopped: the reports of the children it stopped wait for the next input (or an explicit wake).
  if (fromChildren && s.reports_wait && wakes.length === 0 && !recovery && !retryDue && opts.trigger === undefined) return skip('interrupted');
  const trigger: Trigger = opts.trigger ?? (recovery ? 'recovery' : fromChildren ? 'child' : take.length > 0 ? 'event' : wakes.length > 0 ? 'wake_queue' : 'retry');
  return { runnable: true, skipReason: null, trigger, take, wakes, interrupt, recovery };
}


/**
 * When the session next has something to do by itself (ms since the epoch),
 * or null: its earliest pending revisit (unless it waits on a person), or the
 * retry time of a rescheduled run; null while it is paused (the resume's
 * line wakes it) or archived (never woken).
 */
export function nextDueMs(s: SessionSnapshot): number | null {
  if (s.status === 'terminated' || s.paused || s.archived_at !== null) return null;
  let min: number | null = null;
  const consider = (t: number) => {
    if (Number.isFinite(t) && (min === null || t < min)) min = t;
  };
  // While a failed run backs off, nothing else runs before its retry: revisits wait for it.
  if (s.status === 'rescheduling' && s.retry_at) return Date.parse(s.retry_at);
  if (openActions(s).length === 0) for (const w of timedWakes(s)) consider(Date.parse(w.due_at));
  return min;
}

/** Pins the read time of taken-in events whose lines had no created_at into the record that takes them in. */
export function createdAtOf(take: readonly PendingEvent[]): { created_at_of?: Record<string, string> } {
  const pins = take.filter((p) => p.read_at !== undefined).map((p) => [p.id, p.read_at as string] as const);
  return pins.length ? { created_at_of: Object.fromEntries(pins) } : {};
}
