/**
 * The context window's events (docs/context.md): a compaction, which the
 * conversation applies where its line sits and the fold remembers for a
 * rebuild after a restart, and the context warnings.
 */
import { addUsage } from '../store/add-usage.js';
import { pruneTurns } from '../run/context-prune.js';
import { summaryNote } from '../run/fit-opening.js';
import { capability, type ConversationSink, type EventOf } from './event-kind.js';

/** The note a threshold's context warning gives the agent, where its line sits; null for a cut's (the request marks a cut itself). */
export function contextWarningNote(e: EventOf<'session.context_warning'>): string | null {
  if (e.threshold === undefined || e.silent) return null;
  const pct = Math.round(e.threshold * 100);
  return `[openboa: your context window is ${pct}% full (about ${e.tokens} of ${e.window} tokens). Older turns are summarized when it fills further; put anything that must survive word for word on a line marked [VITAL].]`;
}

/**
 * A compaction applied to the conversation, where its line sits, to what
 * was fed before it (docs/context.md): prune the turns that began before
 * `pruned_before_line` (phases 0 and 1), leave out those that began before
 * `kept_from_line` behind its summary, which opens the conversation from
 * here on. So a rebuild from the log gives the same messages.
 */
function compact(sink: ConversationSink, e: EventOf<'agent.thread_context_compacted'>): void {
  if (e.pruned_before_line !== undefined) {
    const { messages, starts } = sink.turns();
    const upTo = starts.findIndex((l) => l >= (e.pruned_before_line as number));
    sink.setTurns(pruneTurns([...messages], upTo < 0 ? messages.length : upTo, { keepThinking: e.keep_thinking ?? 0, pruneOver: e.prune_over ?? Number.MAX_SAFE_INTEGER }), [...starts]);
  }
  if (e.kept_from_line !== undefined && e.summary !== undefined) {
    const { messages, starts } = sink.turns();
    let k = starts.findIndex((l) => l >= (e.kept_from_line as number));
    if (k < 0) k = messages.length;
    sink.setTurns(messages.slice(k), starts.slice(k));
    const vital = e.vital ?? [];
    sink.open({ text: e.summary, vital, eventId: e.id }, summaryNote(e.summary, vital));
  }
}

export const context = capability({
  name: 'context',
  kinds: {
    'agent.thread_context_compacted': {
      fold: {
        apply(s, e, { line, offset }) {
          // The summary requests' tokens and cost are the session's too (phase 2).
          if (e.usage) addUsage(s, e.usage, e.model_requests ?? 0, e.cost_usd);
          // Only a compaction the rebuild acts on (it says where the kept turns start, or what it pruned).
          if (offset !== undefined && (e.kept_from_line !== undefined || e.pruned_before_line !== undefined)) s.compaction = { event_id: e.id, line, offset, ...(e.kept_from_line !== undefined && e.summary !== undefined ? { kept_from_line: e.kept_from_line } : {}) };
          s.context_warned = [];
          // A new summary: what a request cut of the previous one no longer holds.
          if (e.kept_from_line !== undefined && e.summary !== undefined) s.context_cut = null;
        },
      },
      conversation: { enter: compact },
    },
    'session.context_warning': {
      fold: {
        apply(s, e) {
          if (e.threshold !== undefined && !s.context_warned.includes(e.threshold)) s.context_warned = [...s.context_warned, e.threshold];
          if (e.cut) s.context_cut = { event_id: e.id, at: e.created_at, ...e.cut };
        },
      },
      conversation: {
        enter(sink, e) {
          const note = contextWarningNote(e);
          if (note) sink.userText(note);
        },
      },
    },
  },
});
