/**
 * What a run settles before (and instead of) asking the model: tool uses a
 * crashed run left without a result (reconcile), answers people gave to
 * asks and custom tools (settleAnswers, settleLateAnswers), and interrupts
 * (closeForInterrupt, finishInterrupt). Each is safe to redo after a crash:
 * it writes only what the log does not say yet.
 */
import { cascadeInterrupt } from '../delegation/delegation-cascade.js';
import type { PendingEvent, SessionEvent, SessionSnapshot } from '../schema/index.js';
import type { RunJournal } from './journal.js';
import type { ToolPolicy } from './loop-hooks.js';
import { toolUseView } from '../kinds/index.js';
import type { Ending, RunContext, Runtime } from './run-context.js';
import { runTool } from './tool-policy.js';
import { openActions } from '../store/answer-problem.js';

/**
 * SPEC §6 step 3: a tool use whose outcome is unknown (its run died between
 * the call and the result) is closed with an error result. It is never run
 * a second time: it may have had its effect already.
 */
export function reconcile(journal: RunJournal, snap: SessionSnapshot): void {
  const pendingIds = new Set(snap.pending_events.map((p) => p.id));
  const tools = snap.open_tool_uses.filter((u) => u.kind === 'tool');
  const orphans = tools.filter((u) => {
    if (u.permission === 'allow') return true;
    // An answered ask whose answer a run already took in, but whose result never came.
    return u.permission === 'ask' && u.answered_by !== null && !pendingIds.has(u.answered_by);
  });
  journal.toolErrors(
    orphans.map((u) => u.id),
    'outcome unknown: the run was interrupted before this tool call finished; it was not run again',
  );
  // A denied call never runs; its refusal was lost with the run that died before writing it.
  journal.toolErrors(
    tools.filter((u) => u.permission === 'deny').map((u) => u.id),
    'not run: this tool call was not allowed (its refusal is written late: the run that got it was cut short)',
  );
}

function findEvent(ctx: RunContext, id: string): SessionEvent | null {
  const inWindow = ctx.window.recent.find((e) => e.event.id === id);
  if (inWindow) return inWindow.event;
  for (const l of ctx.rt.store.readEvents(ctx.sessionId).lines) if (l.kind === 'event' && l.event.id === id) return l.event;
  return null;
}

/** Runs confirmed tool uses with the input stored in the log, and denies the denied ones. */
export async function settleAnswers(ctx: RunContext, journal: RunJournal, policy: ToolPolicy, answers: readonly PendingEvent[]): Promise<void> {
  for (const p of answers) {
    if (p.type !== 'user.tool_confirmation') continue;
    const conf = findEvent(ctx, p.id);
    if (!conf || conf.type !== 'user.tool_confirmation') continue;
    const use = findEvent(ctx, conf.tool_use_id);
    const view = use ? toolUseView(use) : null;
    if (!use || !view) continue;
    if (conf.result === 'allow') {
      // A service's call is checked by the name the model used; its server may not have started this run (then it is refused here).
      const now = policy.permitsNow(view.name);
      if (now.ok) await runTool(ctx, journal, use, policy.executor(use));
      else journal.toolErrors([use.id], `not run: ${now.why} (it changed after the confirmation was asked)`);
    } else {
      journal.toolErrors([use.id], conf.deny_message ? `the user denied this tool call: ${conf.deny_message}` : 'the user denied this tool call');
    }
  }
}

/**
 * Answers that arrive while the run settles the first ones (a second
 * confirmation a moment later) are taken into this run too, before anything
 * asks the model. Returns the tool uses still waiting for an answer.
 */
export async function settleLateAnswers(ctx: RunContext, journal: RunJournal, policy: ToolPolicy): Promise<string[]> {
  for (;;) {
    const s = ctx.rt.store.snapshot(ctx.sessionId, { persist: false });
    const late = s.pending_events.filter((p) => p.type === 'user.tool_confirmation' || p.type === 'user.custom_tool_result');
    if (late.length === 0 || ctx.control.signal.aborted) {
      return openActions(s).map((u) => u.id);
    }
    journal.emit([{ type: 'session.status_running', wake_id: ctx.runId, trigger: ctx.trigger, processed_event_ids: late.map((p) => p.id), continuation: true }]);
    await settleAnswers(ctx, journal, policy, late);
  }
}

/** An interrupt's effects: every open tool use closed as an error, every queued revisit cancelled (recurring ones too, but not the heartbeat), the children interrupted. Idempotent in effect. */
export function closeForInterrupt(store: Runtime['store'], sessionId: string, journal: RunJournal): void {
  const s = store.snapshot(sessionId, { persist: false });
  journal.toolErrors(
    s.open_tool_uses.map((u) => u.id),
    'interrupted by the user before completion',
  );
  // The agent.yaml heartbeat is the agent's configuration, not queued work: it goes on (run/heartbeat.ts).
  journal.settleWakes('wake.cancelled', s.pending_wakes.filter((w) => w.source !== 'heartbeat').map((w) => w.id), { reason: 'user.interrupt' });
  // The tree below stops too: each child with something to stop gets an interrupt line (delegation-cascade.ts).
  if (!journal.silenced && Object.keys(s.children).length) cascadeInterrupt(store, sessionId, `the parent session ${sessionId} was interrupted`);
}

export function applyInterrupt(ctx: RunContext, journal: RunJournal): void {
  closeForInterrupt(ctx.rt.store, ctx.sessionId, journal);
}

/** After an in-flight abort by an interrupt: take the interrupt in, close the turn. */
export function finishInterrupt(ctx: RunContext, journal: RunJournal): Ending {
  const s = ctx.rt.store.snapshot(ctx.sessionId, { persist: false });
  const interrupts = s.pending_events.filter((p) => p.type === 'user.interrupt');
  applyInterrupt(ctx, journal);
  if (interrupts.length) {
    journal.emit([{ type: 'session.status_running', wake_id: ctx.runId, trigger: ctx.trigger, processed_event_ids: interrupts.map((p) => p.id), continuation: true }]);
  }
  return { kind: 'idle', stop: { type: 'end_turn' } };
}
