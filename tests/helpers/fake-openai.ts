/**
 * A scripted OpenAI-compatible Chat Completions server on 127.0.0.1 for the
 * real `openai` SDK (point an agent's base_url at `url`, which ends in /v1).
 * One scripted step answers one POST /v1/chat/completions, as JSON or as SSE
 * (`data: {chunk}` lines and `data: [DONE]`, when the body says stream:
 * true), the way OpenAI's API streams: text deltas, tool calls by index with
 * their arguments in pieces, a chunk with finish_reason, and a usage chunk
 * with no choices when stream_options.include_usage asks for it. Every
 * request is recorded. A request with no step left fails loudly (500,
 * x-should-retry: false) and is counted.
 */
import http from 'node:http';
import { startScriptedServer, type RecordedBase, type ScriptedServer } from './scripted-server.js';

export interface FakeToolCall {
  id?: string;
  name: string;
  /** An object (sent as its JSON) or the arguments text exactly as sent (malformed JSON included). */
  arguments: Record<string, unknown> | string;
}

export type OaiStep =
  | {
      text?: string;
      toolCalls?: FakeToolCall[];
      /** Default: tool_calls when there are calls, else stop. */
      finishReason?: string;
      usage?: { prompt_tokens?: number; completion_tokens?: number; cached_tokens?: number };
      /** Pause between SSE chunks (to interrupt a reply mid-stream). */
      delayMs?: number;
      /** Send an error chunk after the text, then end. */
      midStreamError?: { message: string; type?: string; code?: string };
      /**
       * Cut the stream after the text, before finish_reason: `reset` destroys
       * the connection, `end` ends the response cleanly (no [DONE]).
       */
      cut?: 'reset' | 'end';
    }
  | { status: number; message?: string; type?: string; code?: string; headers?: Record<string, string> }
  /** Never answer; the request stays open until the client aborts. */
  | { hang: true }
  /** Stream without end until the client goes away (or 256 MB were written): text deltas, one call's arguments, or ever more tool calls. */
  | { flood: 'text' | 'arguments' | 'calls' };

export interface OaiRequest extends RecordedBase {
  body: {
    model: string;
    messages: Array<{ role: string; content?: unknown; tool_calls?: Array<{ id: string; type: string; function: { name: string; arguments: string } }>; tool_call_id?: string }>;
    tools?: Array<{ type: string; function: { name: string; description: string; parameters: Record<string, unknown> } }>;
    tool_choice?: unknown;
    reasoning_effort?: string;
    max_tokens?: number;
    max_completion_tokens?: number;
    stream?: boolean;
    stream_options?: { include_usage?: boolean };
    [k: string]: unknown;
  };
}

export interface FakeOpenAI extends ScriptedServer<OaiStep, OaiRequest> {
  /** The base URL for the SDK: `http://127.0.0.1:<port>/v1`. */
  url: string;
  /** Resolves once the first SSE chunk of request `i` was written (the stream is under way). */
  streaming(i: number): Promise<void>;
}

let counter = 0;

type Reply = Extract<OaiStep, { text?: string }>;

const argumentsText = (a: FakeToolCall['arguments']) => (typeof a === 'string' ? a : JSON.stringify(a));

function usageOf(step: Reply) {
  const u = { prompt_tokens: 10, completion_tokens: 5, cached_tokens: 0, ...step.usage };
  return { prompt_tokens: u.prompt_tokens, completion_tokens: u.completion_tokens, total_tokens: u.prompt_tokens + u.completion_tokens, prompt_tokens_details: { cached_tokens: u.cached_tokens } };
}

function finishOf(step: Reply) {
  return step.finishReason ?? (step.toolCalls?.length ? 'tool_calls' : 'stop');
}

function completion(step: Reply, model: string) {
  const calls = (step.toolCalls ?? []).map((c) => ({ id: c.id ?? `call_fake_${++counter}`, type: 'function', function: { name: c.name, arguments: argumentsText(c.arguments) } }));
  return {
    id: `chatcmpl-fake-${++counter}`,
    object: 'chat.completion',
    created: 0,
    model,
    choices: [{ index: 0, message: { role: 'assistant', content: step.text ?? null, refusal: null, ...(calls.length ? { tool_calls: calls } : {}) }, finish_reason: finishOf(step), logprobs: null }],
    usage: usageOf(step),
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function sendSse(res: http.ServerResponse, step: Reply, body: OaiRequest['body'], isClosed: () => boolean, started: () => void) {
  const id = `chatcmpl-fake-${++counter}`;
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const send = async (data: unknown) => {
    if (isClosed()) return;
    res.write(`data: ${JSON.stringify(data)}\n\n`);
    started();
    if (step.delayMs) await sleep(step.delayMs);
  };
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({ id, object: 'chat.completion.chunk', created: 0, model: body.model, choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }] });
  await send(chunk({ role: 'assistant', content: '' }));
  if (step.text) {
    const mid = Math.ceil(step.text.length / 2);
    for (const part of [step.text.slice(0, mid), step.text.slice(mid)]) if (part) await send(chunk({ content: part }));
  }
  if (step.midStreamError) {
    await send({ error: { message: step.midStreamError.message, type: step.midStreamError.type ?? 'server_error', code: step.midStreamError.code ?? null } });
    res.end();
    return;
  }
  if (step.cut) {
    if (step.cut === 'reset') res.destroy();
    else res.end();
    return;
  }
  for (const [index, c] of (step.toolCalls ?? []).entries()) {
    await send(chunk({ tool_calls: [{ index, id: c.id ?? `call_fake_${++counter}`, type: 'function', function: { name: c.name, arguments: '' } }] }));
    const text = argumentsText(c.arguments);
    const cut = Math.floor(text.length / 3);
    for (const part of [text.slice(0, cut), text.slice(cut)]) if (part) await send(chunk({ tool_calls: [{ index, function: { arguments: part } }] }));
  }
  await send(chunk({}, finishOf(step)));
  if (body.stream_options?.include_usage) await send({ id, object: 'chat.completion.chunk', created: 0, model: body.model, choices: [], usage: usageOf(step) });
  if (!isClosed()) res.write('data: [DONE]\n\n');
  res.end();
}

async function sendFlood(res: http.ServerResponse, kind: 'text' | 'arguments' | 'calls', body: OaiRequest['body'], isClosed: () => boolean, started: () => void) {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const chunk = (delta: Record<string, unknown>) => `data: ${JSON.stringify({ id: 'chatcmpl-flood', object: 'chat.completion.chunk', created: 0, model: body.model, choices: [{ index: 0, delta, finish_reason: null, logprobs: null }] })}\n\n`;
  const piece = 'x'.repeat(64 * 1024);
  let written = 0;
  for (let n = 0; !isClosed() && written < 256 * 1024 * 1024; n++) {
    const line = kind === 'text' ? chunk({ content: piece }) : kind === 'arguments' ? chunk({ tool_calls: [{ index: 0, ...(n === 0 ? { id: 'call_flood', type: 'function', function: { name: 'bash', arguments: piece } } : { function: { arguments: piece } }) }] }) : chunk({ tool_calls: [{ index: n, id: `call_${n}`, type: 'function', function: { name: 'bash', arguments: '{}' } }] });
    written += line.length;
    started();
    if (!res.write(line)) await new Promise<void>((r) => (isClosed() ? r() : res.once('drain', r).once('close', r)));
  }
  res.end();
}

export async function startFakeOpenAI(steps: OaiStep[] = []): Promise<FakeOpenAI> {
  const starts: Array<{ promise: Promise<void>; resolve: () => void }> = [];
  const startOf = (i: number) => {
    if (!starts[i]) {
      let resolve!: () => void;
      const promise = new Promise<void>((r) => (resolve = r));
      starts[i] = { promise, resolve };
    }
    return starts[i]!;
  };
  const server = await startScriptedServer<OaiStep, OaiRequest['body'], OaiRequest>({
    steps,
    route: /\/v1\/chat\/completions$/,
    record: (base, body) => ({ ...base, body, aborted: false }),
    error: (res, status, kind, message) => {
      res.writeHead(status, { 'content-type': 'application/json', ...(kind === 'no_step' ? { 'x-should-retry': 'false' } : {}) });
      res.end(JSON.stringify({ error: { message, type: kind === 'no_step' ? 'server_error' : 'invalid_request_error', code: kind === 'no_step' ? null : 'not_found', param: null } }));
    },
    answer: (step, { rec: { body }, index, res, isClosed }) => {
      const started = () => startOf(index).resolve();
      if ('hang' in step) return;
      if ('flood' in step) {
        void sendFlood(res, step.flood, body, isClosed, started);
        return;
      }
      if ('status' in step) {
        res.writeHead(step.status, { 'content-type': 'application/json', 'retry-after-ms': '0', ...step.headers });
        res.end(JSON.stringify({ error: { message: step.message ?? `scripted ${step.status}`, type: step.type ?? 'server_error', code: step.code ?? null, param: null } }));
        return;
      }
      if (body.stream) void sendSse(res, step, body, isClosed, started);
      else {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(completion(step, body.model)));
      }
    },
  });
  return Object.assign(server, { url: `http://127.0.0.1:${server.port}/v1`, streaming: (i: number) => startOf(i).promise });
}
