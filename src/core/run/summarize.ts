/**
 * Phase 2 of a compaction (docs/context.md): the model writes a summary of
 * the turns being left out, in its own request (no tools), in five sections
 * named by their titles. The turns go to it as a transcript. When they do
 * not fit one request, they are summarized in order, each request getting
 * the summary so far (a summary of summaries); at most MAX_SUMMARY_REQUESTS
 * requests, and what is older than they can take is given as the
 * deterministic digest instead, so compaction stays bounded however long
 * the session grew.
 *
 * It never throws for what the model does: a failure is returned, and the
 * caller falls back to the digest and says so in the log.
 */
import { ZERO_USAGE, type ModelUsage } from '../schema/index.js';
import { ModelError, type Message, type ModelProvider } from '../model/provider.js';
import { cutHead, wellFormed } from '../foundation/text-cut.js';
import { digestOf } from './compaction.js';
import type { RunContext } from './run-context.js';
import { runModel } from './model-choice.js';

/** The five sections, by their titles (seed 002). */
export const SUMMARY_SECTIONS = ['Task Overview', 'Current State', 'Key Discoveries', 'Next Steps', 'Context to Preserve'] as const;
/** Summary requests one compaction makes at most. */
export const MAX_SUMMARY_REQUESTS = 4;
/** max_tokens of a summary request. */
const SUMMARY_MAX_TOKENS = 4096;
/** Characters of one block the transcript keeps (a long one keeps its head). */
const BLOCK_CHARS = 4000;

const SUMMARY_SYSTEM = [
  'You summarize the earlier part of a long working session between a person and an AI agent, so that the agent can go on from your summary alone.',
  `Write exactly these five sections, each under a markdown heading with its title: ${SUMMARY_SECTIONS.map((s) => `## ${s}`).join(', ')}.`,
  'Task Overview: what the agent was asked to do and why. Current State: what is done, what is in progress, what is broken. Key Discoveries: facts learned, decisions made and why, paths, commands, names. Next Steps: what remains, in order. Context to Preserve: anything else the agent must not lose (constraints, preferences, ids, open questions).',
  'Keep lines marked [VITAL], #vital, #critical or [!], and lines starting ERROR: or WARNING:, word for word. Be specific and brief; never invent what the transcript does not say.',
].join('\n');

export interface SummaryResult {
  ok: boolean;
  /** The summary (ok), or why it failed. */
  text: string;
  usage: ModelUsage;
  requests: number;
}

/** One message as transcript lines (thinking is left out). */
function transcript(m: Message): string {
  const lines: string[] = [];
  for (const b of m.content as ReadonlyArray<Record<string, unknown> & { type: string }>) {
    if (b.type === 'text') lines.push(`${m.role === 'user' ? 'USER' : 'AGENT'}: ${cutHead(String(b.text), BLOCK_CHARS)}`);
    else if (b.type === 'tool_use') lines.push(`AGENT called ${String(b.name)}: ${cutHead(JSON.stringify(b.input), BLOCK_CHARS)}`);
    else if (b.type === 'tool_result') {
      const text = (b.content as Array<{ text: string }>).map((c) => c.text).join('\n');
      lines.push(`TOOL RESULT${b.is_error ? ' (error)' : ''}: ${cutHead(text, BLOCK_CHARS)}`);
    } else if (b.type === 'image' || b.type === 'document') lines.push(`${m.role === 'user' ? 'USER' : 'AGENT'}: [${b.type}]`);
  }
  return lines.join('\n');
}

/** The left-out messages in chunks of at most `room` characters, whole messages each (a huge one alone). */
function chunks(messages: readonly Message[], room: number): Array<{ text: string; messages: Message[] }> {
  const out: Array<{ text: string; messages: Message[] }> = [];
  let cur: { text: string; messages: Message[] } = { text: '', messages: [] };
  for (const m of messages) {
    const t = transcript(m);
    if (!t) continue;
    if (cur.text && cur.text.length + t.length + 1 > room) (out.push(cur), (cur = { text: '', messages: [] }));
    cur.text += `${cur.text ? '\n' : ''}${cutHead(t, room)}`;
    cur.messages.push(m);
  }
  if (cur.text) out.push(cur);
  return out;
}

/**
 * Summarizes `leftOut` (oldest first), continuing `previous` (the summary
 * the conversation opened with, when it was compacted before). Each request
 * is counted through `countRequest` before it is sent.
 */
export async function summarize(ctx: RunContext, model: ModelProvider, countRequest: () => void, leftOut: readonly Message[], previous: string | null, signal: AbortSignal): Promise<SummaryResult> {
  const limits = ctx.agent.def.limits;
  const maxTokens = Math.min(SUMMARY_MAX_TOKENS, limits.max_output_tokens);
  // Characters one request's transcript may hold (about 3 a token): the window less the reply, the summary so far and the instructions.
  const room = Math.max(4000, (limits.context_window_tokens - 3 * maxTokens - 1000) * 3);
  let parts = chunks(leftOut, room);
  // The summary so far goes into each request: bounded, so a long history of compactions cannot crowd the transcript out.
  let summary = previous === null ? null : cutHead(previous, Math.min(room / 2, 4 * SUMMARY_MAX_TOKENS));
  if (parts.length > MAX_SUMMARY_REQUESTS) {
    // Older than the requests can take: the deterministic digest of it stands in, ahead of the summary so far.
    const older = parts.slice(0, parts.length - MAX_SUMMARY_REQUESTS).flatMap((p) => p.messages);
    summary = `${summary ? `${summary}\n\n` : ''}${cutHead(digestOf(older), room / 4)}`;
    parts = parts.slice(-MAX_SUMMARY_REQUESTS);
  }
  const usage: ModelUsage = { ...ZERO_USAGE };
  let requests = 0;
  for (const part of parts) {
    const prompt = [summary ? `<summary_so_far>\n${summary}\n</summary_so_far>` : '', `<transcript>\n${part.text}\n</transcript>`, summary ? 'Write the five-section summary of the whole session so far: the summary above and the transcript that follows it.' : 'Write the five-section summary of this transcript.'].filter(Boolean).join('\n\n');
    countRequest();
    requests += 1;
    try {
      const res = await model.complete({ model: runModel(ctx).model, max_tokens: maxTokens, system: SUMMARY_SYSTEM, tools: [], messages: [{ role: 'user', content: [{ type: 'text', text: wellFormed(prompt) }] }] }, signal);
      for (const k of ['input_tokens', 'output_tokens', 'cache_creation_input_tokens', 'cache_read_input_tokens'] as const) usage[k] += res.usage[k];
      const text = res.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('\n').trim();
      if (!text) return { ok: false, text: 'the summary request returned no text', usage, requests };
      summary = text;
    } catch (e) {
      const why = e instanceof ModelError ? `${e.code}: ${e.message}` : (e as Error).message;
      return { ok: false, text: why, usage, requests };
    }
  }
  return { ok: summary !== null, text: summary ?? 'nothing to summarize', usage, requests };
}
