/**
 * The PrematureIntent guard (docs/context.md, "Guards: failure detection"),
 * an after-turn hook. When a reply says the agent is about to act ("I'll
 * run the tests", "Let me check the config", "Next I will edit...") and
 * ends the turn without a tool call, nothing was done: the guard records a
 * reminder (`session.guard`, action `remind`), which the model reads as
 * its next user turn, and asks the model again. Once: a reply that answers
 * a reminder ends the turn as it is, whatever it says.
 *
 * The heuristic (saysItWillAct) is deliberately small and deterministic:
 * only the reply's last text counts, and of it the last two sentences; a
 * reply ending in a question is waiting for the person, not announcing
 * work. Intent is one of the phrases of INTENT followed (after a few
 * adverbs) by a verb of ACTION_VERBS, so "I'll wait for your answer" or
 * "let me know" are not intent.
 */
import type { SessionEvent } from '../schema/index.js';
import type { AfterTurnHook } from './loop-hooks.js';
import { lastText, quote, recentEvents, recordGuard } from './guard-log.js';

const INTENT = /\b(?:i['’]ll|i will|i shall|i['’]m going to|i am going to|i['’]m about to|let me|let['’]s|let us)\s+(?:(?:now|first|next|then|quickly|also|just|go ahead and|start by|begin by)\s+)*([a-z]+)/gi;

/** Verbs that mean doing something with a tool. */
export const ACTION_VERBS = new Set(
  (
    'run rerun execute check look read open inspect examine investigate explore scan search grep find list view ' +
    'write create edit fix update change modify patch apply add remove delete rename move copy install build compile ' +
    'test retry try verify validate debug implement refactor rewrite set configure start launch fetch download clone ' +
    'commit push deploy make generate call use query count compare review analyze analyse measure profile trace print ' +
    'dig see proceed continue begin do'
  ).split(' '),
);

/** Sentences of `text`, split at . ! ? : and line ends. */
function sentences(text: string): string[] {
  return text.split(/(?<=[.!?:])\s+|\n+/).map((s) => s.trim()).filter(Boolean);
}

/** The sentence of `text` that announces an action, or null (see the module's note). */
export function saysItWillAct(text: string): string | null {
  const t = text.trim();
  if (t === '' || t.endsWith('?')) return null;
  for (const s of sentences(t).slice(-2).reverse()) {
    for (const m of s.matchAll(INTENT)) if (ACTION_VERBS.has(m[1]!.toLowerCase())) return s;
  }
  return null;
}

/** Whether the reply starting at `first` answers a premature_intent reminder: the last thing said before its request (a retry after a crash in between included). */
function answersReminder(events: readonly SessionEvent[], first: SessionEvent): boolean {
  const i = events.findIndex((e) => e.id === first.id);
  for (let k = i - 1; k >= 0; k--) {
    const e = events[k]!;
    if (e.type === 'session.guard') return e.guard === 'premature_intent';
    // New input, or an earlier reply, came after any reminder: this reply answers that, not a reminder.
    if (e.type === 'session.status_running' && (e.processed_event_ids.length > 0 || (e.wakes?.length ?? 0) > 0)) return false;
    if (e.type.startsWith('agent.') || e.type === 'span.model_request_end' || e.type === 'span.outcome_evaluation_end') return false;
    // Anything else (the request's start, a retried run's opening, its error) leaves the reminder the last thing said.
  }
  return false;
}

export function prematureIntentGuard(enabled: boolean): AfterTurnHook {
  return {
    afterTurn(ctx, journal, turn) {
      if (!enabled || !turn || turn.uses.length > 0 || turn.asks.length > 0 || turn.empty) return undefined;
      // Another guard already answered this turn (a replan nudge, an escalation): one nudge at a time.
      if (journal.written.at(-1)?.type === 'session.guard') return undefined;
      const said = saysItWillAct(lastText(turn.written));
      const first = turn.written[0];
      if (!said || !first || answersReminder(recentEvents(ctx, journal), first)) return undefined;
      recordGuard(
        journal,
        'premature_intent',
        'remind',
        `[openboa premature_intent guard: your last reply says "${quote(said)}" but it called no tool, so nothing was done. If you meant to act, call the tool now; if you are done or waiting for the person, say so in one line.]`,
      );
      return { continue: true };
    },
  };
}
