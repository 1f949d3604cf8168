/**
 * The mapping between our Messages-form request and reply (provider.ts) and
 * the Chat Completions API of OpenAI-compatible servers, both ways. Pure
 * functions: no SDK, no I/O (openai.ts sends what these build).
 *
 * Request:
 *  - the system prompt is the first message, `role: system`;
 *  - a user turn becomes one `role: tool` message per tool_result, in order
 *    (they must follow the assistant message that called them), then one
 *    `role: user` message with the rest (text, images; a document, which
 *    Chat Completions cannot take, is a one-line note instead). A failed
 *    result's text is prefixed with TOOL_ERROR_PREFIX: the API has no
 *    is_error;
 *  - an assistant turn becomes one message: its text blocks joined as
 *    `content`, its tool_use blocks as `tool_calls` (several in one turn
 *    stay one message). Thinking blocks are dropped: the API cannot take
 *    them back, and a reasoning model reasons afresh each request. A turn of
 *    thinking only is left out;
 *  - tools are `function` tools with the catalog's JSON Schema; a forced
 *    tool is `{type: function, function: {name}}`.
 *
 * Reply: streamed chunks are assembled by ReplyAssembler (text in order,
 * tool calls by their `index`, arguments concatenated), then `finish_reason`
 * and usage are mapped (replyOf).
 */
import { randomUUID } from 'node:crypto';
import type { ModelUsage } from '../schema/index.js';
import { malformedArguments, parseToolArguments } from '../tools/tool-arguments.js';
import { ModelError, type AssistantBlock, type DeltaSink, type ModelRequest, type ModelResponse, type UserBlock } from './provider.js';

/** The SDK's shapes, written out for the fields we send and read (the wire format is the contract, not the SDK's type names). */
export type ChatContentPart = { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } };
export type ChatToolCall = { id: string; type: 'function'; function: { name: string; arguments: string } };
export type ChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string | ChatContentPart[] }
  | { role: 'assistant'; content: string | null; tool_calls?: ChatToolCall[] }
  | { role: 'tool'; tool_call_id: string; content: string };
export type ChatTool = { type: 'function'; function: { name: string; description: string; parameters: Record<string, unknown> } };

/** Marks a failed tool result's text: Chat Completions has no is_error. */
export const TOOL_ERROR_PREFIX = '[tool error] ';

export function chatMessages(req: Pick<ModelRequest, 'system' | 'messages'>): ChatMessage[] {
  const out: ChatMessage[] = [];
  if (req.system) out.push({ role: 'system', content: req.system });
  for (const m of req.messages) {
    if (m.role === 'user') out.push(...userMessages(m.content));
    else {
      const text = m.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('');
      const calls: ChatToolCall[] = m.content.flatMap((b) => (b.type === 'tool_use' ? [{ id: b.id, type: 'function' as const, function: { name: b.name, arguments: argumentsText(b.input) } }] : []));
      if (text === '' && calls.length === 0) continue; // thinking only
      out.push({ role: 'assistant', content: text === '' ? null : text, ...(calls.length ? { tool_calls: calls } : {}) });
    }
  }
  return out;
}

/** A call's arguments as sent back: the model's own text when it was malformed, else the input as JSON. */
function argumentsText(input: Record<string, unknown>): string {
  return malformedArguments(input) ?? JSON.stringify(input);
}

function userMessages(blocks: UserBlock[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  const parts: ChatContentPart[] = [];
  for (const b of blocks) {
    if (b.type === 'tool_result') {
      const text = b.content.map((c) => c.text).join('');
      out.push({ role: 'tool', tool_call_id: b.tool_use_id, content: b.is_error ? `${TOOL_ERROR_PREFIX}${text}` : text });
    } else if (b.type === 'text') parts.push({ type: 'text', text: b.text });
    else if (b.type === 'image') parts.push(imagePart(b.source));
    else parts.push({ type: 'text', text: '[a document was attached here; this model API does not take documents]' });
  }
  if (parts.length) out.push({ role: 'user', content: parts.every((p) => p.type === 'text') ? parts.map((p) => (p as { text: string }).text).join('\n\n') : parts });
  return out;
}

function imagePart(source: Record<string, unknown>): ChatContentPart {
  if (source.type === 'base64' && typeof source.media_type === 'string' && typeof source.data === 'string') return { type: 'image_url', image_url: { url: `data:${source.media_type};base64,${source.data}` } };
  if (source.type === 'url' && typeof source.url === 'string') return { type: 'image_url', image_url: { url: source.url } };
  return { type: 'text', text: '[an image was attached here in a form this model API does not take]' };
}

/** The ids of the tool calls in a conversation. */
export function toolCallIds(req: Pick<ModelRequest, 'messages'>): Set<string> {
  const ids = new Set<string>();
  for (const m of req.messages) if (m.role === 'assistant') for (const b of m.content) if (b.type === 'tool_use') ids.add(b.id);
  return ids;
}

export function chatTools(req: Pick<ModelRequest, 'tools'>): ChatTool[] {
  return req.tools.map((t) => ({ type: 'function', function: { name: t.name, description: t.description, parameters: t.input_schema } }));
}

export function chatToolChoice(req: Pick<ModelRequest, 'tool_choice'>): { type: 'function'; function: { name: string } } | undefined {
  return req.tool_choice ? { type: 'function', function: { name: req.tool_choice.name } } : undefined;
}

export type ReasoningEffort = 'low' | 'medium' | 'high';

/**
 * `reasoning_effort` for a thinking budget: the tier whose budget
 * (THINKING_TIERS: low 2048, medium 8192, high 16384) is nearest, the
 * midpoints 5120 and 12288 going up; none without thinking, and none for a
 * forced tool (the grader), as with the Messages API.
 */
export function reasoningEffort(req: Pick<ModelRequest, 'thinking' | 'tool_choice'>): ReasoningEffort | undefined {
  if (!req.thinking || req.tool_choice) return undefined;
  const b = req.thinking.budget_tokens;
  return b < 5120 ? 'low' : b < 12288 ? 'medium' : 'high';
}

/** The parts of a streamed chunk we read (ChatCompletionChunk, loosely: local servers differ). */
export interface ChunkLike {
  choices?: Array<{
    delta?: { content?: string | null; refusal?: string | null; tool_calls?: Array<{ index?: number; id?: string | null; function?: { name?: string | null; arguments?: string | null } | null }> | null } | null;
    finish_reason?: string | null;
  }> | null;
  usage?: UsageLike | null;
}

export interface UsageLike {
  prompt_tokens?: number | null;
  completion_tokens?: number | null;
  prompt_tokens_details?: { cached_tokens?: number | null } | null;
}

/**
 * Bounds of one assembled reply, whatever the server streams: its text, tool
 * names, ids and arguments together, in characters (a fixed bound, not one
 * derived from max_tokens: a token's length in characters is the server's
 * to choose, so max_tokens bounds nothing we can count), and its tool calls.
 * A real reply is far below both (the largest max_tokens of any model is
 * well under a million tokens of text the run could use).
 */
export const MAX_REPLY_CHARS = 4 * 1024 * 1024;
export const MAX_TOOL_CALLS = 128;

function tooLarge(what: string): ModelError {
  return new ModelError({ message: `the model's reply was cut off: ${what}; the server may be misbehaving`, errorType: 'model_request_failed_error', code: 'reply_too_large', retryable: false });
}

/**
 * Collects one streamed reply (choice 0): text in order, tool calls by
 * index. add() throws a ModelError (code reply_too_large, not retryable)
 * once the reply passes MAX_REPLY_CHARS or MAX_TOOL_CALLS: the caller stops
 * reading, which aborts the stream.
 */
export class ReplyAssembler {
  private text = '';

  /** `onDelta` hears the reply's text as it arrives (provider.ts DeltaSink): the one text block, content[0]. */
  constructor(private readonly onDelta?: DeltaSink) {}
  private readonly calls = new Map<number, { id: string; name: string; args: string }>();
  private chars = 0;
  finishReason: string | null = null;
  usage: UsageLike | null = null;

  add(chunk: ChunkLike): void {
    if (chunk.usage) this.usage = chunk.usage;
    const choice = chunk.choices?.[0];
    if (!choice) return;
    const d = choice.delta;
    if (d?.content) this.addText(d.content);
    if (d?.refusal) this.addText(d.refusal);
    for (const t of d?.tool_calls ?? []) {
      const i = t.index ?? this.calls.size;
      const c = this.calls.get(i) ?? { id: '', name: '', args: '' };
      if (!this.calls.has(i) && this.calls.size >= MAX_TOOL_CALLS) throw tooLarge(`more than ${MAX_TOOL_CALLS} tool calls`);
      // An id replaces the one before: it counts once, as the longest it was.
      if (t.id) this.take(t.id.slice(c.id.length)), (c.id = t.id);
      if (t.function?.name) c.name += this.take(t.function.name);
      if (t.function?.arguments) c.args += this.take(t.function.arguments);
      this.calls.set(i, c);
    }
    if (choice.finish_reason) this.finishReason = choice.finish_reason;
  }

  private addText(piece: string): void {
    this.text += this.take(piece);
    this.onDelta?.({ kind: 'text', index: 0, text: piece });
  }

  /** Counts `piece` against MAX_REPLY_CHARS (before it is appended) and returns it. */
  private take(piece: string): string {
    this.chars += piece.length;
    if (this.chars > MAX_REPLY_CHARS) throw tooLarge(`it is over ${MAX_REPLY_CHARS} characters`);
    return piece;
  }

  /**
   * The assembled reply as our ModelResponse. `taken`: the tool-call ids
   * already in the conversation. Some servers number calls afresh each
   * reply (call_0, call_1, ...), and the conversation needs every id once, so
   * an id already taken (or repeated in this reply) is replaced.
   */
  reply(taken: ReadonlySet<string> = new Set()): ModelResponse {
    const content: AssistantBlock[] = [];
    if (this.text !== '') content.push({ type: 'text', text: this.text });
    const seen = new Set(taken);
    for (const [, c] of [...this.calls.entries()].sort((a, b) => a[0] - b[0])) {
      let id = toolCallId(c.id);
      if (seen.has(id)) id = toolCallId('');
      seen.add(id);
      content.push({ type: 'tool_use', id, name: c.name, input: parseToolArguments(c.args) });
    }
    return { content, stop_reason: stopReason(this.finishReason, content.some((b) => b.type === 'tool_use')), usage: modelUsage(this.usage), stop_details: null };
  }
}

/**
 * A tool call's id as we keep it: the Messages API takes ids of letters,
 * digits, _ and - only (up to 64), and the conversation may go to it later
 * (an agent that switches provider), so other characters become _. A server
 * that sent no id gets one.
 */
export function toolCallId(id: string): string {
  const clean = id.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 64);
  return clean !== '' ? clean : `call_${randomUUID().replace(/-/g, '').slice(0, 24)}`;
}

/**
 * finish_reason as a Messages API stop_reason. Some servers say `stop` when
 * the reply calls tools: calls make it tool_use whatever was said, unless
 * the reply was cut off (length).
 */
export function stopReason(finish: string | null, hasCalls: boolean): string {
  if (finish === 'length') return 'max_tokens';
  if (finish === 'content_filter') return 'refusal';
  if (hasCalls || finish === 'tool_calls' || finish === 'function_call') return 'tool_use';
  return 'end_turn';
}

/**
 * Usage in our four numbers. prompt_tokens counts the cached ones too;
 * Chat Completions reports cache reads (cached_tokens) and no cache writes
 * (the API caches prefixes by itself, at no extra price), so input_tokens
 * is prompt_tokens less cached_tokens and cache_creation is always 0.
 */
export function modelUsage(u: UsageLike | null): ModelUsage {
  const prompt = u?.prompt_tokens ?? 0;
  const cached = Math.min(u?.prompt_tokens_details?.cached_tokens ?? 0, prompt);
  return { input_tokens: prompt - cached, output_tokens: u?.completion_tokens ?? 0, cache_creation_input_tokens: 0, cache_read_input_tokens: cached };
}
