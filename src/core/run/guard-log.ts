/**
 * What the after-turn guards (stale-loop-guard.ts, premature-intent-guard.ts)
 * read and write. They keep nothing between runs: what they count and what
 * they did is read back from the log, the window's recent events plus what
 * this run wrote since, so a restarted daemon or the next run carries on
 * where the last one stood. What they do is one `session.guard` record each
 * (with why), written through the run's journal.
 */
import type { GuardAction, GuardName, SessionEvent } from '../schema/index.js';
import { NUDGE_ACTIONS } from '../schema/index.js';
import type { RunJournal } from './journal.js';
import type { RunContext } from './run-context.js';
import { cutHead } from '../foundation/text-cut.js';

/** The session's latest events as the run sees them now, oldest first: the window's tail, then what this run wrote after it. */
export function recentEvents(ctx: RunContext, journal: RunJournal): SessionEvent[] {
  const out = ctx.window.recent.map((l) => l.event);
  const seen = new Set(out.map((e) => e.id));
  for (const e of journal.written) if (!seen.has(e.id)) out.push(e);
  return out;
}

/** Records a guard's act; a nudge (remind, replan) is also what the model reads next, where it sits. */
export function recordGuard(journal: RunJournal, guard: GuardName, action: GuardAction, message: string): void {
  journal.emit([{ type: 'session.guard', guard, action, message }]);
}

/** Whether the last thing this run wrote is a guard's nudge (the model is asked again to answer it). */
export function nudgedLast(journal: RunJournal): boolean {
  const last = journal.written.at(-1);
  return last?.type === 'session.guard' && NUDGE_ACTIONS.has(last.action);
}

/** The text of the last agent.message among `events`, or ''. */
export function lastText(events: readonly SessionEvent[]): string {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i]!;
    if (e.type === 'agent.message') {
      const t = e.content.map((b) => b.text).join('\n').trim();
      if (t) return t;
    }
  }
  return '';
}

/** `text` on one line, at most `n` characters (for quoting a reply in a guard's message). */
export function quote(text: string, n = 200): string {
  const t = text.replace(/\s+/g, ' ').trim();
  return t.length > n ? `${cutHead(t, n - 1)}…` : t;
}
