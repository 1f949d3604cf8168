/**
 * A scripted Messages API server on 127.0.0.1 for the real @anthropic-ai/sdk
 * (point it here with ANTHROPIC_BASE_URL). One scripted step answers one
 * POST /v1/messages, as JSON or as SSE (when the body says stream: true),
 * following the recipe in reference/managed-agents.md §16. Every request is
 * recorded, so tests assert on what the runtime sent. A request with no step
 * left fails loudly (500, x-should-retry: false) and is counted.
 */
import http from 'node:http';
import { startScriptedServer, type RecordedBase, type ScriptedServer } from './scripted-server.js';

export interface ToolUseStep {
  id?: string;
  name: string;
  /** An object (streamed as its JSON) or the input's JSON text exactly as streamed (malformed JSON included; the non-streamed reply then has `{}`). */
  input: Record<string, unknown> | string;
}

export type Step =
  | {
      text?: string;
      toolUses?: ToolUseStep[];
      thinking?: { thinking: string; signature: string };
      stopReason?: string;
      usage?: { input_tokens?: number; output_tokens?: number; cache_creation_input_tokens?: number; cache_read_input_tokens?: number };
      /** Pause between SSE events (to interrupt a reply mid-stream). */
      delayMs?: number;
      /** Send an `event: error` after the text, then end. */
      midStreamError?: { type: string; message: string };
      /**
       * Cut the stream after the text, before the block ends: `reset` destroys
       * the connection, `end` ends the response cleanly (no message_stop).
       */
      cut?: 'reset' | 'end';
    }
  | { status: number; errorType?: string; message?: string; headers?: Record<string, string> }
  /** Never answer; the request stays open until the client aborts. */
  | { hang: true; /** Only for the requests this accepts, ahead of the steps without it (scripted-server.ts). */ for?: (r: RecordedRequest) => boolean };

export interface RecordedRequest extends RecordedBase {
  body: {
    model: string;
    system?: string;
    max_tokens: number;
    stream?: boolean;
    messages: Array<{ role: string; content: Array<Record<string, unknown>> | string }>;
    tools?: Array<{ name: string; description: string; input_schema: Record<string, unknown> }>;
  };
  /**
   * The request exactly as sent. `body` is the same with each run's note
   * (the `[openboa] now …` block that closes a run's user turn, see
   * system-prompt.ts runContext) taken out of the messages, so tests about
   * the conversation read the conversation; tests about the notes, the cache
   * breakpoints or the bytes sent read `raw`.
   */
  raw: RecordedRequest['body'];
}

/** `body` without the runtime's per-run notes in its messages (a message left empty is dropped), and without cache_control marks. */
export function withoutRunNotes(body: RecordedRequest['body']): RecordedRequest['body'] {
  if (!Array.isArray(body.messages)) return body;
  const strip = (b: Record<string, unknown>) => {
    const { cache_control: _c, ...rest } = b;
    return rest;
  };
  const messages = body.messages
    .map((m) => (Array.isArray(m.content) ? { ...m, content: m.content.filter((b) => !(b.type === 'text' && typeof b.text === 'string' && b.text.startsWith('[openboa] now '))).map(strip) } : m))
    .filter((m) => !Array.isArray(m.content) || m.content.length > 0);
  // Two user turns that the note kept apart would be one without it.
  const merged: typeof messages = [];
  for (const m of messages) {
    const last = merged[merged.length - 1];
    if (last && last.role === m.role && Array.isArray(last.content) && Array.isArray(m.content)) merged[merged.length - 1] = { ...last, content: [...last.content, ...m.content] };
    else merged.push(m);
  }
  const system = Array.isArray(body.system) ? (body.system as Array<{ text?: string }>).map((b) => b.text ?? '').join('') : body.system;
  const tools = Array.isArray(body.tools) ? body.tools.map((t) => strip(t as unknown as Record<string, unknown>) as unknown as (typeof body.tools)[number]) : body.tools;
  return { ...body, messages: merged, ...(system !== undefined ? { system } : {}), ...(tools ? { tools } : {}) };
}

export interface FakeAnthropic extends ScriptedServer<Step, RecordedRequest> {
  url: string;
  /** Bodies of POST /v1/messages/count_tokens requests (answered with an estimate, not from the script). */
  counted: Array<RecordedRequest['body']>;
}

let counter = 0;

function message(step: Extract<Step, { text?: string }>) {
  const content: Array<Record<string, unknown>> = [];
  if (step.thinking) content.push({ type: 'thinking', thinking: step.thinking.thinking, signature: step.thinking.signature });
  if (step.text !== undefined) content.push({ type: 'text', text: step.text });
  for (const t of step.toolUses ?? []) content.push({ type: 'tool_use', id: t.id ?? `toolu_fake_${++counter}`, name: t.name, input: typeof t.input === 'string' ? {} : t.input });
  const usage = { input_tokens: 10, output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, ...step.usage };
  return {
    id: `msg_fake_${++counter}`,
    type: 'message',
    role: 'assistant',
    model: 'fake-model',
    content,
    stop_reason: step.stopReason ?? (step.toolUses?.length ? 'tool_use' : 'end_turn'),
    stop_sequence: null,
    stop_details: null,
    usage,
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function sendSse(res: http.ServerResponse, step: Extract<Step, { text?: string }>, isClosed: () => boolean) {
  const msg = message(step);
  // The tool uses are the last blocks: tool use k is block firstTool + k.
  const inputTexts = (step.toolUses ?? []).map((t) => (typeof t.input === 'string' ? t.input : JSON.stringify(t.input)));
  const firstTool = msg.content.length - inputTexts.length;
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const send = async (event: string, data: unknown) => {
    if (isClosed()) return;
    res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    if (step.delayMs) await sleep(step.delayMs);
  };
  await send('message_start', { type: 'message_start', message: { ...msg, content: [], stop_reason: null, usage: { ...msg.usage, output_tokens: 0 } } });
  await send('ping', { type: 'ping' });
  for (let i = 0; i < msg.content.length; i++) {
    const b = msg.content[i] as Record<string, unknown>;
    if (b.type === 'text') {
      await send('content_block_start', { type: 'content_block_start', index: i, content_block: { type: 'text', text: '' } });
      const text = String(b.text);
      const mid = Math.ceil(text.length / 2);
      for (const part of [text.slice(0, mid), text.slice(mid)]) if (part) await send('content_block_delta', { type: 'content_block_delta', index: i, delta: { type: 'text_delta', text: part } });
      if (step.midStreamError) {
        await send('error', { type: 'error', error: step.midStreamError });
        res.end();
        return;
      }
      if (step.cut) {
        if (step.cut === 'reset') res.destroy();
        else res.end();
        return;
      }
    } else if (b.type === 'thinking') {
      await send('content_block_start', { type: 'content_block_start', index: i, content_block: { type: 'thinking', thinking: '', signature: '' } });
      await send('content_block_delta', { type: 'content_block_delta', index: i, delta: { type: 'thinking_delta', thinking: b.thinking } });
      await send('content_block_delta', { type: 'content_block_delta', index: i, delta: { type: 'signature_delta', signature: b.signature } });
    } else {
      await send('content_block_start', { type: 'content_block_start', index: i, content_block: { type: 'tool_use', id: b.id, name: b.name, input: {} } });
      const json = inputTexts[i - firstTool]!;
      const cut = Math.floor(json.length / 3);
      for (const part of [json.slice(0, cut), json.slice(cut)]) await send('content_block_delta', { type: 'content_block_delta', index: i, delta: { type: 'input_json_delta', partial_json: part } });
    }
    await send('content_block_stop', { type: 'content_block_stop', index: i });
  }
  if (step.midStreamError && !msg.content.some((b) => b.type === 'text')) {
    await send('error', { type: 'error', error: step.midStreamError });
    res.end();
    return;
  }
  await send('message_delta', { type: 'message_delta', delta: { stop_reason: msg.stop_reason, stop_sequence: null }, usage: msg.usage });
  await send('message_stop', { type: 'message_stop' });
  res.end();
}

/** Usage a test or benchmark computes from the request as sent (e.g. a prompt-cache simulation), instead of the step's. */
export type UsageFor = (raw: RecordedRequest['body']) => { input_tokens: number; cache_creation_input_tokens: number; cache_read_input_tokens: number };

export async function startFakeAnthropic(steps: Step[] = [], o: { usageFor?: UsageFor } = {}): Promise<FakeAnthropic> {
  const counted: Array<RecordedRequest['body']> = [];
  const server = await startScriptedServer<Step, RecordedRequest['body'], RecordedRequest>({
    steps,
    route: /\/v1\/messages$/,
    record: (base, body) => ({ ...base, body: withoutRunNotes(body), raw: body, aborted: false }),
    aside: (req, body, res) => {
      if (!(req.method === 'POST' && /\/v1\/messages\/count_tokens$/.test((req.url ?? '').split('?')[0] ?? ''))) return false;
      // Token counting is answered, never scripted: about 4 characters a token of what was sent. Kept apart from `requests`.
      counted.push(body);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ input_tokens: Math.ceil(JSON.stringify({ system: body.system, tools: body.tools, messages: body.messages }).length / 4) }));
      return true;
    },
    error: (res, status, kind, message) => {
      res.writeHead(status, { 'content-type': 'application/json', ...(kind === 'no_step' ? { 'x-should-retry': 'false' } : {}) });
      res.end(JSON.stringify({ type: 'error', error: { type: kind === 'no_step' ? 'api_error' : 'not_found_error', message } }));
    },
    answer: (step, { rec, res, isClosed }) => {
      if ('hang' in step) return;
      if ('status' in step) {
        res.writeHead(step.status, { 'content-type': 'application/json', 'retry-after-ms': '0', ...step.headers });
        res.end(JSON.stringify({ type: 'error', error: { type: step.errorType ?? 'api_error', message: step.message ?? `scripted ${step.status}` } }));
        return;
      }
      if (rec.raw.stream) {
        const usage = o.usageFor ? o.usageFor(rec.raw) : undefined;
        void sendSse(res, usage ? { ...step, usage: { ...step.usage, ...usage } } : step, isClosed);
      } else {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(message(step)));
      }
    },
  });
  return Object.assign(server, { url: `http://127.0.0.1:${server.port}`, counted });
}
