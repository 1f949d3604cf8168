/**
 * Today's context strategy (a ContextStrategy of the loop): the conversation
 * rebuilt from the log window, the session-stable system prompt, the offered
 * tools, and the messages fitted to the window by fit-window.ts — a
 * compaction's summary and VITAL lines first, then whole old turns left out
 * behind a deterministic digest (compaction.ts), then naming, then cutting.
 *
 * It records what it did: runtime/summary.md and, once per run, an
 * agent.thread_context_compacted when turns were left out; a
 * session.context_warning when the summary or VITAL lines had to be cut;
 * runtime/context.json for every request; and, once per session, a
 * session.error naming each event the conversation could not take in. It
 * never throws for anything in the log. Its one piece of per-run state
 * (whether this run has recorded a compaction) lives in the object, which is
 * built fresh for every run.
 */
import type { ModelRequest } from '../model/provider.js';
import type { SessionSnapshot } from '../schema/index.js';
import { wellFormed, wellFormedDeep } from '../foundation/text-cut.js';
import type { ConversationView } from './conversation.js';
import { awaitsModel } from './message-repair.js';
import { estimateTokens } from './token-budget.js';
import { fitMessages, MIN_TURN_TOKENS } from './fit-window.js';
import { noteTokens, summaryNote } from './fit-opening.js';
import { systemPrompt } from './system-prompt.js';
import { renderedSections } from './prompt-sections.js';
import type { ContextStrategy } from './loop-hooks.js';
import type { RunJournal } from './journal.js';
import type { RunContext } from './run-context.js';
import { runSlot } from './run-state.js';

export function fitAndDigest(): ContextStrategy {
  const state = { compacted: false };
  return {
    rebuild: rebuildFromWindow,
    fit: (ctx, journal, conv, snap) => fitToWindow(ctx, journal, conv, snap, state),
  };
}

/** The conversation from the run's log window; null when nothing awaits the model. */
export function rebuildFromWindow(ctx: RunContext, snap: SessionSnapshot): ConversationView | null {
  ctx.window.refresh(snap);
  const conv = ctx.window.builder.view();
  return awaitsModel(conv.messages) ? conv : null;
}

type Frame = { system: string; tools: ModelRequest['tools']; est: { system: number; tools: number } };

/** One frame per run: the system prompt and the tools do not change within a run (the prompt cache depends on it). */
const FRAME = runSlot<{ frame: Frame | null }>('request frame', () => ({ frame: null }));

/**
 * The request's fixed part: the session-stable system prompt and the
 * offered tools, with their estimates. Built once per run and shared by
 * every request of it (the context strategy and the fit both read it).
 */
export function requestFrame(ctx: RunContext): Frame {
  const slot = ctx.state.get(FRAME);
  if (slot.frame) return slot.frame;
  // Well-formed like every text of the request: skill descriptions and AGENTS.md are files people write.
  const system = wellFormed(systemPrompt(ctx.agent.def.system, renderedSections(ctx)));
  const tools = wellFormedDeep(ctx.catalog.offered);
  const frame = { system, tools, est: { system: estimateTokens(system), tools: estimateTokens(tools) } };
  slot.frame = frame;
  return frame;
}

/**
 * Fits one request into the window: the summary and VITAL lines first, then
 * the newest turns, whole old turns left out behind a digest, then naming,
 * then cutting (fit-window.ts), in what the window leaves after the reply,
 * the system prompt and the tools, all counted with the same estimate.
 * Records what it did: runtime/summary.md and one
 * agent.thread_context_compacted per run when turns were left out; a
 * session.context_warning with `cut` when the summary or VITAL lines had to
 * be cut (once per compaction and kind of cut: `snap.context_cut`);
 * runtime/context.json with `extra` merged in. `state` is the strategy's
 * per-run memory.
 */
export function fitToWindow(ctx: RunContext, journal: RunJournal, conv: ConversationView, snap: SessionSnapshot, state: { compacted: boolean }, extra: Record<string, unknown> = {}): Pick<ModelRequest, 'system' | 'tools' | 'messages'> {
  const limits = ctx.agent.def.limits;
  const { system, tools, est } = requestFrame(ctx);
  reportProblems(ctx, journal, snap);
  const fixed = est.system + est.tools;
  // Honest: may be small or below 0 (a small window, a large catalog); fitMessages still sends the turn in progress.
  const room = limits.context_window_tokens - limits.max_output_tokens - fixed;
  const fit = fitMessages(conv, room);
  if (fit.digest !== null) {
    // The summary stays in the file: the agent is pointed there for it, and for the turns the digest stands for.
    const summary = conv.opening ? `${summaryNote(conv.opening.summary.text, conv.opening.summary.vital)}\n\n` : '';
    ctx.files.write('summary.md', `# Summary\n\n${summary ? 'The summary that opens this session\'s requests, then the' : 'The'} latest digest of turns left out of the context window (run ${ctx.runId}).\n\n${summary}${fit.digest}\n`);
    if (!state.compacted) {
      state.compacted = true;
      journal.emit([{ type: 'agent.thread_context_compacted', summary_path: '/runtime/summary.md', tokens_before: conv.tokens, tokens_after: fit.tokens }]);
    }
  }
  warnOfCut(ctx, journal, conv, snap, fit, { room, est, total: fixed + fit.tokens });
  writeContextFile(ctx, conv, { system, tools, messages: fit.messages }, fit, est, room, extra);
  return { system, tools, messages: fit.messages };
}

/**
 * One session.context_warning {cut} when the request cut the summary or its
 * VITAL lines, saying what and why; not again for the same compaction and
 * the same kind of cut (the summary cut or not, the VITAL lines left out),
 * which every request after it repeats.
 */
function warnOfCut(ctx: RunContext, journal: RunJournal, conv: ConversationView, snap: SessionSnapshot, fit: ReturnType<typeof fitMessages>, m: { room: number; est: { system: number; tools: number }; total: number }) {
  const o = fit.opening;
  if (!o || !conv.opening || (o.summaryLeftOut === 0 && o.vitalLeftOut === 0)) return;
  const compaction = conv.opening.summary.eventId;
  const last = snap.context_cut;
  if (last && last.compaction_event_id === compaction && last.vital_lines_left_out === o.vitalLeftOut && (last.summary_chars_left_out > 0) === (o.summaryLeftOut > 0)) return;
  const limits = ctx.agent.def.limits;
  const need = noteTokens(summaryNote(conv.opening.summary.text, conv.opening.summary.vital));
  const why = `the summary and its VITAL lines take about ${need} tokens; the window of ${limits.context_window_tokens} less max_output_tokens (${limits.max_output_tokens}), the system prompt (${m.est.system}) and the tools (${m.est.tools}) leaves ${m.room}, of which ${MIN_TURN_TOKENS} are kept for the turn in progress`;
  journal.emit([{ type: 'session.context_warning', tokens: m.total, window: limits.context_window_tokens, cut: { compaction_event_id: compaction, summary_chars: o.summaryChars, summary_chars_left_out: o.summaryLeftOut, vital_lines: o.vitalLines, vital_lines_left_out: o.vitalLeftOut, room: m.room, why } }]);
}

function writeContextFile(ctx: RunContext, conv: ConversationView, req: Pick<ModelRequest, 'system' | 'tools' | 'messages'>, fit: ReturnType<typeof fitMessages>, est: { system: number; tools: number }, room: number, extra: Record<string, unknown>) {
  const limits = ctx.agent.def.limits;
  const fixed = est.system + est.tools;
  ctx.files.json('context.json', {
    wake_id: ctx.runId,
    context_window_tokens: limits.context_window_tokens,
    max_output_tokens: limits.max_output_tokens,
    estimated_tokens: { system: est.system, tools: est.tools, messages: fit.tokens, total: fixed + fit.tokens },
    messages: fit.messages.length,
    conversation_room: room,
    summary_chars_left_out: fit.opening?.summaryLeftOut ?? 0,
    vital_lines_left_out: fit.opening?.vitalLeftOut ?? 0,
    dropped_messages: fit.dropped,
    blocks_cut_to_fit: fit.cut,
    messages_named_only: fit.named,
    events_not_read: fit.notRead,
    taken_in_before_window: ctx.window.takenInBeforeWindow,
    window_starts_at_first_line: ctx.window.fromStart,
    window_first_line: ctx.window.firstLine,
    repairs: conv.repairs,
    system_prompt_chars: req.system.length,
    tools: req.tools.map((t) => t.name),
    ...extra,
  });
}

/** A session.error for each event the conversation could not take in, once per session (the snapshot's `reported` keys). */
function reportProblems(ctx: RunContext, journal: RunJournal, snap: SessionSnapshot) {
  const seen = new Set(snap.reported);
  const fresh = ctx.window.builder.problems.filter((p) => !seen.has(`events.jsonl:${p.line}`));
  if (fresh.length === 0) return;
  journal.emit(fresh.map((p) => ({ type: 'session.error' as const, error: { type: 'unknown_error' as const, code: 'unconvertible_event', message: p.message, retry_status: { type: 'terminal' as const } }, line: p.line, event_id: p.eventId })));
  journal.noteErrors(fresh.map((p) => p.message));
}
