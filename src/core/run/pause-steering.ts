/**
 * Pause and resume, in a run (docs/context.md, "Pause and resume"): a run
 * in progress when a user.pause arrives stops at its next step, before its
 * next model request. Nothing is cut mid-way: a model request in flight is
 * answered and recorded, the tools of that reply run to their end, then the
 * run ends `idle` with `end_turn`. It writes `session.run_paused` first,
 * naming the pause: the agent's turn was cut there, so the resume is taken
 * in by a run that finishes it (store/pause-fold.ts).
 *
 * An interrupt wins over a pause: with both pending, the inner steering
 * (takeMidRunInput) aborts the run for the interrupt.
 */
import type { Steering } from './loop-hooks.js';

/** Wraps the run's steering: each step first checks whether the session was paused. */
export function stopWhenPaused(inner: Steering): Steering {
  return {
    poll(ctx, journal) {
      const s = ctx.rt.store.snapshot(ctx.sessionId, { persist: false });
      if (!s.paused || s.pending_events.some((p) => p.type === 'user.interrupt')) return inner.poll(ctx, journal);
      journal.emit([{ type: 'session.run_paused', wake_id: ctx.runId, pause_event_id: s.paused.event_id }]);
      ctx.control.abort({ kind: 'paused' });
      return s;
    },
  };
}
