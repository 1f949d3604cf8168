/**
 * Waiting for the agent's answer to one event: what `openboa send --wait`,
 * `openboa chat`, a program using the library, and later the HTTP API do
 * after they append a message. It follows the session's log from a cursor
 * (the store's follow: the folder's watch as a hint, the log read for the
 * truth), hands each new event to the caller, and ends when the turn that
 * took the event in is over:
 *
 *   session.status_running taking the event in    → the turn has started
 *   …the run's events (messages, tool calls, evaluations)…
 *   session.status_idle (any stop reason)         → over: `idle`
 *   session.status_terminated                     → over: `terminated`
 *   session.status_rescheduled                    → not over: a retry will
 *                                                   finish the turn (`onEvent`
 *                                                   sees it, to say so)
 *
 * A `status_idle` written before the event was taken in (the end of an
 * earlier run) does not end the wait. It runs nothing itself: a daemon, or
 * the caller (see runUntilSettled), runs the session. Ends early, with
 * `aborted`, when the signal aborts, or `settled` when the caller's own runs
 * (`until`) are over without ending the turn.
 */
import type { SessionEvent } from '../schema/index.js';
import type { Cursor, EventLines, SessionStore } from '../store/session-store.js';

export type TurnEnd =
  | { kind: 'idle'; event: Extract<SessionEvent, { type: 'session.status_idle' }> }
  | { kind: 'terminated'; event: Extract<SessionEvent, { type: 'session.status_terminated' }> }
  /** `until` settled and the log holds no end of the turn (its run backed off, or no run took the event in). */
  | { kind: 'settled' }
  | { kind: 'aborted' };

export interface WatchTurnOptions {
  /** Where to read from: a cursor at or before the event's line (the snapshot's before appending it). */
  from: Cursor;
  signal?: AbortSignal;
  /** Each event after `from`, in log order (the event itself included), each once. Must not throw. */
  onEvent?: (e: SessionEvent) => void;
  /**
   * The caller's own runs (runUntilSettled): once it settles, what the log
   * holds is read at once (not at the watch's next hint) and the wait ends,
   * with the turn's end or `settled`.
   */
  until?: Promise<unknown>;
  /** Read again at least this often without a watch event, ms (default: the store's follow sweep). */
  sweepMs?: number;
}

/** Resolves when the turn that takes `eventId` in is over (see the module's contract). */
export async function watchTurn(store: SessionStore, sessionId: string, eventId: string, o: WatchTurnOptions): Promise<TurnEnd> {
  const done = new AbortController();
  const stop = () => done.abort();
  o.signal?.addEventListener('abort', stop, { once: true });
  let started = false;
  let end: TurnEnd = { kind: 'aborted' };
  let cursor = o.from;
  /** Takes lines in; true once the turn is over. */
  const take = (lines: EventLines['lines']): boolean => {
    for (const l of lines) {
      if (l.kind !== 'event') continue;
      const e = l.event;
      o.onEvent?.(e);
      if (e.type === 'session.status_running' && e.processed_event_ids.includes(eventId)) started = true;
      else if (e.type === 'session.status_terminated') end = { kind: 'terminated', event: e };
      else if (started && e.type === 'session.status_idle') end = { kind: 'idle', event: e };
      if (end.kind !== 'aborted') return true;
    }
    return false;
  };
  void o.until?.finally(() => {
    if (done.signal.aborted) return;
    // The caller's runs are over: read the rest now, then stop (a batch the watch delivers after this is ignored).
    const rest = store.readEvents(sessionId, cursor);
    cursor = rest.cursor;
    if (!take(rest.lines)) end = { kind: 'settled' };
    done.abort();
  });
  try {
    if (o.signal?.aborted) return end;
    await store.subscribe(sessionId, { from: o.from, signal: done.signal, ...(o.sweepMs !== undefined ? { sweepMs: o.sweepMs } : {}) }, (batch) => {
      if (done.signal.aborted) return;
      cursor = batch.cursor;
      if (take(batch.lines)) done.abort();
    });
  } finally {
    o.signal?.removeEventListener('abort', stop);
  }
  return end;
}
