/**
 * The context strategy of long sessions (a ContextStrategy of the loop;
 * docs/context.md). Before each request:
 *
 * 1. When the request would pass `context.compact_at` of the window
 *    (estimated, then counted by the provider where it can), compact:
 *    phase 0 drops old thinking blocks, phase 1 cuts old tool results over
 *    `prune_tool_results_over` (context-prune.ts); when that is not enough,
 *    phase 2 has the model summarize the turns left out (summarize.ts), and
 *    the summary, with their VITAL lines verbatim, opens the requests from
 *    then on. A failed summary falls back to the deterministic digest, and
 *    the log says so.
 * 2. Each `context.warn_at` threshold passed since the last compaction is
 *    told to the agent once, as a note in this request.
 * 3. The request is fitted to the window (fit-and-digest.ts): the summary
 *    and VITAL lines first, cut only when they alone do not fit (and then
 *    a session.context_warning says so), then the newest turns, then the
 *    digest; runtime/context.json says where the window stands.
 *
 * Everything it decides is written to the log before the request that uses
 * it (agent.thread_context_compacted, session.context_warning), and the
 * conversation is rebuilt from those records (conversation.ts), so a
 * restarted daemon builds the same request without calling the model, and
 * between compactions every request repeats the previous one as its prefix.
 */
import type { Message, ModelProvider, ModelRequest } from '../model/provider.js';
import type { NewEvent, SessionSnapshot } from '../schema/index.js';
import { estimateTokens } from './token-budget.js';
import { cutHead } from '../foundation/text-cut.js';
import { digestOf } from './compaction.js';
import { pruneTurns, vitalOf } from './context-prune.js';
import { summaryNote } from './fit-opening.js';
import { summarize } from './summarize.js';
import { fitToWindow, rebuildFromWindow, requestFrame } from './fit-and-digest.js';
import type { ConversationView } from './conversation.js';
import type { ContextStrategy } from './loop-hooks.js';
import type { RunJournal } from './journal.js';
import type { RunContext } from './run-context.js';
import { runModel } from './model-choice.js';
import { requestCost } from '../definitions/pricing.js';

/** VITAL lines carried after a summary at most (the newest). */
export const MAX_VITAL_LINES = 64;
/** Characters of a summary (or of the digest standing in for one) at most. */
export const MAX_SUMMARY_CHARS = 16_000;
/** Only when the estimate is this close to the threshold is the provider asked to count. */
const COUNT_FROM = 0.9;
/** Compactions one run makes at most (a turn too large to leave out would otherwise ask for one every step). */
const MAX_COMPACTIONS_PER_RUN = 2;

type Compaction = Extract<NewEvent, { type: 'agent.thread_context_compacted' }>;

export function compactingContext(model: ModelProvider): ContextStrategy {
  const state = { compacted: false };
  let last: Record<string, unknown> | null = null;
  let compactions = 0;
  return {
    rebuild: rebuildFromWindow,
    async fit(ctx, journal, conv, snap) {
      const c = ctx.agent.def.context;
      const window = ctx.agent.def.limits.context_window_tokens;
      const { system, tools, est } = requestFrame(ctx);
      const fixed = est.system + est.tools;
      let tokens = fixed + conv.tokens;
      if (tokens >= c.compact_at * window * COUNT_FROM) tokens = await measure(ctx, model, { system, tools, messages: conv.messages }, tokens);
      if (tokens >= c.compact_at * window && compactions < MAX_COMPACTIONS_PER_RUN) {
        compactions += 1;
        const done = await compact(ctx, journal, model, conv, tokens, fixed);
        if (done) {
          last = done;
          ({ conv, snap } = rebuilt(ctx));
          tokens = fixed + conv.tokens;
        }
      }
      const warned = new Set(snap.context_warned);
      const fresh = [...c.warn_at].sort((a, b) => a - b).filter((t) => tokens >= t * window && !warned.has(t));
      if (fresh.length) {
        // Only the highest threshold passed is said; every one passed is recorded, so none is said later.
        journal.emit(fresh.map((t, i) => ({ type: 'session.context_warning' as const, threshold: t, tokens, window, ...(i < fresh.length - 1 ? { silent: true } : {}) })));
        ({ conv, snap } = rebuilt(ctx));
      }
      return fitToWindow(ctx, journal, conv, snap, state, {
        context: { tokens_used: tokens, window, share: Math.round((tokens / window) * 1000) / 1000, compact_at: c.compact_at, warn_at: c.warn_at, thresholds_passed: snap.context_warned, last_compaction: last ?? lastCompaction(snap) },
      });
    },
  };
}

/** The conversation and the session as the log now says (after this strategy wrote to it). */
function rebuilt(ctx: RunContext): { conv: ConversationView; snap: SessionSnapshot } {
  const snap = ctx.rt.store.snapshot(ctx.sessionId, { persist: false });
  ctx.window.refresh(snap);
  return { conv: ctx.window.builder.view(), snap };
}

function lastCompaction(snap: SessionSnapshot): Record<string, unknown> | null {
  return snap.compaction ? { event_id: snap.compaction.event_id, line: snap.compaction.line } : null;
}

/** The provider's count of the request's input tokens, where it offers one; else the estimate. */
async function measure(ctx: RunContext, model: ModelProvider, req: Pick<ModelRequest, 'system' | 'tools' | 'messages'>, estimate: number): Promise<number> {
  if (!model.countTokens) return estimate;
  try {
    const n = await model.countTokens({ model: runModel(ctx).model, ...req }, ctx.control.signal);
    return Number.isFinite(n) && n > 0 ? n : estimate;
  } catch {
    return estimate; // counting is a refinement: the estimate decides when it cannot be had
  }
}

/**
 * One compaction: where the kept turns start, phases 0 and 1 on the turns
 * before, phase 2 when still over half-way between keep_recent and
 * compact_at. Writes the record; returns what runtime/context.json shows,
 * or null when there is nothing to compact (one turn too large alone: the
 * fit cuts it) or the run was stopped.
 */
async function compact(ctx: RunContext, journal: RunJournal, model: ModelProvider, conv: ConversationView, tokensBefore: number, fixed: number): Promise<Record<string, unknown> | null> {
  const c = ctx.agent.def.context;
  const window = ctx.agent.def.limits.context_window_tokens;
  const { messages, starts } = ctx.window.builder.committed();
  // The turn in progress (not yet a committed message) is always kept: it counts against what is kept.
  const pending = Math.max(0, conv.tokens - estimateTokens(messages as Message[]));
  const k = keptFrom(messages, c.keep_recent * window - pending);
  if (k <= 0) return null;
  const boundary = starts[k]!;
  const rule = { keepThinking: c.keep_thinking, pruneOver: c.prune_tool_results_over };
  const pruned = pruneTurns(messages, k, rule);
  const after = fixed + estimateTokens(pruned) + pending;
  const base: Compaction = { type: 'agent.thread_context_compacted', summary_path: '/runtime/summary.md', tokens_before: tokensBefore, tokens_after: after, pruned_before_line: boundary, keep_thinking: rule.keepThinking, prune_over: rule.pruneOver, phases: [0, 1] };
  const enough = (c.keep_recent + (c.compact_at - c.keep_recent) / 2) * window;
  if (after <= enough) {
    journal.emit([base]);
    return { event: 'phases 0 and 1', pruned_before_line: boundary, tokens_before: tokensBefore, tokens_after: after };
  }
  // Phase 2: the turns before the boundary, pruned, are summarized; the previous summary is carried into it.
  const leftOut = pruned.slice(0, k);
  const previous = ctx.window.builder.compactedSummary;
  // Newest first, linear: the lines of the turns left out, then those carried from before, MAX_VITAL_LINES in all.
  const fresh = vitalOf(messages.slice(0, k), MAX_VITAL_LINES);
  const carried = new Set(fresh);
  const room = MAX_VITAL_LINES - fresh.length;
  const older = room > 0 ? (previous?.vital ?? []).filter((v) => !carried.has(v)).slice(-room) : [];
  const vital = [...older, ...fresh];
  const s = await summarize(ctx, model, () => journal.countRequest(), leftOut, previous ? previous.text : null, ctx.control.signal);
  journal.addUsage(s.usage);
  if (ctx.control.signal.aborted) return null;
  // Bounded either way: a run of failed summaries must not grow what opens every request.
  const summary = cutHead(s.ok ? s.text : `${previous ? `${cutHead(previous.text, MAX_SUMMARY_CHARS / 2)}\n\n` : ''}${digestOf(leftOut)}`, MAX_SUMMARY_CHARS);
  const kept = estimateTokens(pruned.slice(k));
  const note = summaryNote(summary, vital);
  const record: Compaction = { ...base, phases: [0, 1, 2], kept_from_line: boundary, summary, vital, tokens_after: fixed + kept + estimateTokens(note) + pending, usage: s.usage, model_requests: s.requests, cost_usd: requestCost(ctx.agent.def, runModel(ctx).model, s.usage), ...(s.ok ? {} : { fallback: `the summary request failed (${s.text}); the deterministic digest stands in` }) };
  if (!s.ok) journal.error({ code: 'summary_failed', message: `the context summary could not be written (${s.text}); the turns left out are summarized by a digest instead`, retry: 'exhausted' });
  journal.emit([record]);
  ctx.files.write('summary.md', `# Summary\n\nThe summary that opens this session's requests since run ${ctx.runId}${s.ok ? '' : ' (a digest: the summary request failed)'}.\n\n${note}\n`);
  return { event: s.ok ? 'summary' : 'digest (summary failed)', kept_from_line: boundary, tokens_before: tokensBefore, tokens_after: record.tokens_after, summary_requests: s.requests };
}

/**
 * Where the kept turns start: the earliest user turn that holds no tool
 * results (so no result loses its tool use) from which the messages fit
 * `keep` tokens. 0 when no such cut leaves anything out.
 */
function keptFrom(messages: readonly Message[], keep: number): number {
  let tokens = 0;
  let best = -1;
  for (let i = messages.length - 1; i >= 1; i--) {
    tokens += estimateTokens(messages[i]);
    if (tokens > keep && best >= 0) break;
    const m = messages[i]!;
    if (m.role === 'user' && m.content.every((b) => b.type !== 'tool_result')) best = i;
  }
  return best < 0 ? 0 : best;
}
