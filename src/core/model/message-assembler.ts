/**
 * Assembles one streamed Messages API reply from its events
 * (message_start, content_block_start / _delta / _stop, message_delta,
 * message_stop), as ReplyAssembler does for Chat Completions. Pure: no SDK,
 * no I/O (anthropic.ts reads the stream).
 *
 * A tool use's input is the JSON text of its input_json_delta events,
 * parsed once at the end by parseToolArguments: text that is not one JSON
 * object (a malformed reply, or arguments cut off at max_tokens) becomes the
 * malformed-arguments input the tool policy refuses, exactly as with Chat
 * Completions. The SDK's own MessageStream would fail the whole reply on
 * malformed JSON and read a cut-off object as its complete part.
 *
 * Blocks of server tools we do not offer (server_tool_use, web search
 * results, ...) are skipped, as are citations.
 */
import type { ModelUsage } from '../schema/index.js';
import { parseToolArguments } from '../tools/tool-arguments.js';
import type { AssistantBlock, DeltaSink, ModelResponse } from './provider.js';

/** The fields of a stream event we read (RawMessageStreamEvent, loosely: a gateway may differ). */
export interface MessageEventLike {
  type?: string;
  index?: number;
  message?: { usage?: UsageLike | null } | null;
  content_block?: { type?: string; id?: string; name?: string; input?: unknown; text?: string; thinking?: string; signature?: string; data?: string } | null;
  delta?: { type?: string; text?: string; partial_json?: string; thinking?: string; signature?: string; stop_reason?: string | null; stop_details?: { category?: string | null; explanation?: string | null } | null } | null;
  usage?: UsageLike | null;
}

export interface UsageLike {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
}

type Part =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; json: string; start: unknown }
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'redacted_thinking'; data: string };

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export class MessageAssembler {
  private readonly parts = new Map<number, Part>();
  /** Stream index → the block's place in reply()'s content (blocks we skip take none). */
  private readonly places = new Map<number, number>();

  /** `onDelta` hears text and thinking as their deltas arrive (provider.ts DeltaSink). */
  constructor(private readonly onDelta?: DeltaSink) {}
  private stopReason: string | null = null;
  private stopDetails: ModelResponse['stop_details'] = null;
  private readonly usage: ModelUsage = { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
  /** Whether message_stop arrived: a stream that ends before it was cut off. */
  ended = false;

  add(ev: MessageEventLike): void {
    switch (ev.type) {
      case 'message_start':
        this.takeUsage(ev.message?.usage);
        break;
      case 'content_block_start': {
        const part = partOf(ev.content_block);
        if (part && typeof ev.index === 'number') {
          // Blocks start in index order, so the ones kept so far are the ones before this one in reply().
          this.places.set(ev.index, this.parts.size);
          this.parts.set(ev.index, part);
          if (part.type === 'text' && part.text !== '') this.tell('text', ev.index, part.text);
          else if (part.type === 'thinking' && part.thinking !== '') this.tell('thinking', ev.index, part.thinking);
        }
        break;
      }
      case 'content_block_delta': {
        const p = typeof ev.index === 'number' ? this.parts.get(ev.index) : undefined;
        const d = ev.delta;
        if (!p || !d) break;
        if (d.type === 'text_delta' && p.type === 'text') {
          p.text += d.text ?? '';
          if (d.text) this.tell('text', ev.index as number, d.text);
        } else if (d.type === 'input_json_delta' && p.type === 'tool_use') p.json += d.partial_json ?? '';
        else if (d.type === 'thinking_delta' && p.type === 'thinking') {
          p.thinking += d.thinking ?? '';
          if (d.thinking) this.tell('thinking', ev.index as number, d.thinking);
        }
        else if (d.type === 'signature_delta' && p.type === 'thinking') p.signature = d.signature ?? '';
        break;
      }
      case 'message_delta':
        this.stopReason = ev.delta?.stop_reason ?? this.stopReason;
        if (ev.delta?.stop_details) this.stopDetails = { category: ev.delta.stop_details.category ?? null, explanation: ev.delta.stop_details.explanation ?? null };
        this.takeUsage(ev.usage);
        break;
      case 'message_stop':
        this.ended = true;
        break;
    }
  }

  private tell(kind: 'text' | 'thinking', streamIndex: number, text: string): void {
    if (!this.onDelta) return;
    const index = this.places.get(streamIndex);
    if (index !== undefined) this.onDelta({ kind, index, text });
  }

  /** Usage counts are cumulative totals: one that is present replaces the one before. */
  private takeUsage(u: UsageLike | null | undefined): void {
    if (!u) return;
    for (const k of ['input_tokens', 'output_tokens', 'cache_creation_input_tokens', 'cache_read_input_tokens'] as const) {
      const v = u[k];
      if (typeof v === 'number') this.usage[k] = v;
    }
  }

  /** The reply so far as our ModelResponse (blocks in index order). */
  reply(): ModelResponse {
    const content: AssistantBlock[] = [...this.parts.entries()]
      .sort((a, b) => a[0] - b[0])
      .map(([, p]) => {
        if (p.type !== 'tool_use') return { ...p };
        // Without input_json_delta events, the input the block started with (a non-streamed form).
        const input = p.json === '' ? (isRecord(p.start) ? p.start : {}) : parseToolArguments(p.json);
        return { type: 'tool_use', id: p.id, name: p.name, input };
      });
    return { content, stop_reason: this.stopReason, usage: { ...this.usage }, stop_details: this.stopDetails };
  }
}

function partOf(b: MessageEventLike['content_block']): Part | null {
  switch (b?.type) {
    case 'text':
      return { type: 'text', text: b.text ?? '' };
    case 'tool_use':
      return { type: 'tool_use', id: b.id ?? '', name: b.name ?? '', json: '', start: b.input };
    case 'thinking':
      return { type: 'thinking', thinking: b.thinking ?? '', signature: b.signature ?? '' };
    case 'redacted_thinking':
      return { type: 'redacted_thinking', data: b.data ?? '' };
    default:
      return null;
  }
}
