/**
 * The StaleLoop guard (docs/context.md, "Guards: failure detection"), an
 * after-turn hook. It counts, from the log, the agent's replies in a row
 * that made no progress (staleReplies): at `replan_at` it records a replan
 * nudge (`session.guard`, action `replan`), which the model reads as its next
 * user turn, and asks the model again; at `escalate_at` it escalates to a
 * person: it appends an `escalate` custom tool use of its own after the last
 * reply (with a runtime-made `toolu_openboa_…` id; the conversation merges it
 * into that reply's assistant turn) and the record that says why, in one
 * write, and the session pauses on requires_action until `openboa resolve`
 * answers it (the answer is that tool use's result).
 *
 * Nothing is kept in memory: the count and whether the guard already acted
 * on this streak are read back from the log at each turn, so the count goes
 * on across runs (revisits, restarts) and a run that died right after a
 * reply acts on recovery, once.
 */
import type { EscalateInput, NewEvent, SessionEvent } from '../schema/index.js';
import type { AfterTurnHook, TurnVerdict } from './loop-hooks.js';
import type { RunJournal } from './journal.js';
import type { RunContext } from './run-context.js';
import { lastText, quote, recentEvents, recordGuard } from './guard-log.js';
import { ESCALATE } from './escalation-policy.js';
import { parseFiringId } from '../schedule/recurrence.js';
import { progressingPlanChanges, TODO } from './plan-file.js';

export type StaleLoopSettings = false | { replan_at: number; escalate_at: number };

/** The options of the guard's own escalation, in the order `openboa resolve --pick` numbers them. */
export const STALE_OPTIONS = [
  'Go on, with a different approach: the agent replans and acts (a message can say how)',
  'Stop: the agent ends this task here and waits for new instructions',
] as const;

/**
 * The agent's replies in a row without progress, newest streak, and what the
 * guard already did on it. Walking back from the newest event:
 *  - a reply (a model request with an agent.message and no tool call) counts one;
 *  - so does a reply whose tool calls are all `todo` calls that marked no step
 *    done (rewriting the plan is not doing it: plan-file.ts, progressingPlanChanges);
 *  - any other tool call (agent.tool_use, agent.mcp_tool_use, agent.custom_tool_use),
 *    a `todo` call that marked a step done, input a run took in
 *    from a person or program (a session.status_running with
 *    processed_event_ids: a message, an answer, an outcome), a firing of a
 *    recurring revisit a run took in, or an outcome's evaluation ends the
 *    streak;
 *  - nothing else counts or ends it: one-shot revisits, errors, empty
 *    replies, the guards' own nudges.
 * Only `events` are read (the window's recent events, RECENT in log-window.ts), far more than a streak of a few replies spans.
 */
export function staleReplies(events: readonly SessionEvent[]): { count: number; acted: Set<string> } {
  let count = 0;
  let said = false;
  const acted = new Set<string>();
  const planned = progressingPlanChanges(events);
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i]!;
    switch (e.type) {
      case 'agent.tool_use':
        if (e.name === TODO && !planned.has(e.id)) {
          said = true;
          break;
        }
        return { count, acted };
      case 'agent.mcp_tool_use':
      case 'agent.custom_tool_use':
      case 'span.outcome_evaluation_end':
        return { count, acted };
      case 'session.status_running':
        // A firing of a recurring revisit (the heartbeat, a cron) is the clock's input: "nothing to do" is a fine answer to it.
        if (e.processed_event_ids.length > 0 || (e.wakes ?? []).some((w) => parseFiringId(w.id) !== null)) return { count, acted };
        break;
      case 'agent.message':
        if (e.content.some((b) => b.text.trim() !== '')) said = true;
        break;
      case 'span.model_request_start':
        if (said) count += 1;
        said = false;
        break;
      case 'session.guard':
        if (e.guard === 'stale_loop') acted.add(e.action);
        break;
      default:
        break;
    }
  }
  return { count, acted };
}

/** A tool use id the Messages API takes, made from the event's id. */
function runtimeToolUseId(eventId: string): string {
  return `toolu_openboa_${eventId.replace(/[^a-zA-Z0-9_-]/g, '')}`;
}

function escalate(ctx: RunContext, journal: RunJournal, count: number, events: readonly SessionEvent[]): TurnVerdict {
  const id = ctx.rt.store.deps.ids.event();
  const last = quote(lastText(events));
  const input: EscalateInput = {
    situation: `The agent gave ${count} replies in a row without progress: no tool call, and no new message or answer since. Its last reply: "${last}". It was told to replan and did not get going. How should it go on?`,
    options: [...STALE_OPTIONS],
    confidence: 0,
  };
  const why = `${count} replies in a row without progress (escalate_at); the session waits for a person to answer escalation ${id}`;
  const written = journal.emit([
    { type: 'agent.custom_tool_use', id, name: ESCALATE, input, model_tool_use_id: runtimeToolUseId(id) } as NewEvent,
    { type: 'session.guard', guard: 'stale_loop', action: 'escalate', message: why, tool_use_id: id },
  ]);
  if (written.length === 0) return undefined; // silenced: the run is over for this process
  return { end: { kind: 'idle', stop: { type: 'requires_action', event_ids: [id] } } };
}

export function staleLoopGuard(settings: StaleLoopSettings): AfterTurnHook {
  return {
    afterTurn(ctx, journal, turn) {
      if (!settings) return undefined;
      // A turn that called a tool other than `todo` made progress; one that only rewrote the plan is judged from the log.
      if (turn && (turn.uses.some((u) => !(u.type === 'agent.tool_use' && u.name === TODO)) || turn.asks.length > 0 || turn.empty)) return undefined;
      const events = recentEvents(ctx, journal);
      const { count, acted } = staleReplies(events);
      if (acted.has('escalate')) return undefined;
      if (settings.escalate_at > 0 && count >= settings.escalate_at) return escalate(ctx, journal, count, events);
      if (settings.replan_at > 0 && count >= settings.replan_at && !acted.has('replan')) {
        recordGuard(
          journal,
          'stale_loop',
          'replan',
          `[openboa stale_loop guard: that is ${count} replies in a row without progress (no tool call, no new input). Stop and replan: say in one line what is blocking you, then take the next concrete step with a tool${settings.escalate_at > 0 ? `, or call escalate if you need a person to decide. At ${settings.escalate_at} such replies a person is asked` : ''}.]`,
        );
        return { continue: true };
      }
      return undefined;
    },
  };
}
