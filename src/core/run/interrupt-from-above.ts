/**
 * Born interrupted (docs/delegation.md, "Stopping a tree that is still
 * spawning"): a session whose work was asked for before one of its
 * ancestors was interrupted does none of that work. An interrupt is a
 * point in time; the work a session holds was asked for at its
 * `mandate_at` (a parent's run stamps its own opening on the task it
 * writes, so work a run started before the interrupt stays older than it
 * however late its task lands). Such a run takes in an interrupt and ends
 * without asking its model, as a run that took in an interrupt alone does:
 * its children are interrupted too, and their reports do not wake it. A
 * new message to the session (a person's, or a parent's run that opened
 * after the interrupt) is newer, and the session works again.
 *
 * This is what stops a tree that is still spawning: the cascade reaches a
 * session only when its parent's run takes the interrupt in, while a child
 * spawned meanwhile, or one whose task was queued, would otherwise start.
 */
import type { RunJournal } from './journal.js';
import type { RunContext } from './run-context.js';
import type { RunPlan } from './plan.js';
import type { RunGate } from './loop-hooks.js';
import { ancestorsOf, interruptedAfter } from '../delegation/session-tree.js';

/**
 * Whether an ancestor's interrupt is newer than the work this run would
 * do. When it is and the run took in no interrupt of its own, one is
 * appended to the session's log naming that ancestor, and taken in (so the
 * log says why, and the fold holds reports back as after any interrupt).
 * Called once the run has opened.
 */
export function interruptFromAbove(ctx: RunContext, journal: RunJournal, plan: RunPlan): boolean {
  const s = ctx.startSnapshot;
  if (!s.parent_session_id) return false;
  const hit = interruptedAfter(ancestorsOf(ctx.rt.store, s), s.mandate_at, ctx.rt.deps.clock.now());
  if (!hit) return false;
  if (!plan.interrupt && !journal.silenced) {
    const asked = s.mandate_at ? `this session's work was asked for at ${s.mandate_at}` : 'this session was asked for nothing';
    const line = ctx.rt.store.appendUserEvent(ctx.sessionId, { type: 'user.interrupt', reason: `the session ${hit.session.id} above this one was interrupted at ${hit.at}; ${asked}, before that. A new message sets it going again.` });
    journal.emit([{ type: 'session.status_running', wake_id: ctx.runId, trigger: ctx.trigger, processed_event_ids: [line.id], continuation: true }]);
  }
  return true;
}

/** The gate (loop-hooks.ts) that stops work asked for before an ancestor's interrupt. */
export function bornInterrupted(): RunGate {
  return { stops: interruptFromAbove };
}
