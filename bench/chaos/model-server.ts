/**
 * A scripted Messages API on 127.0.0.1 for the chaos benchmark. Unlike
 * tests/helpers/fake-anthropic.ts (a queue of steps), each answer is computed
 * from the request itself by a `decide` function, so the script stays right
 * however often the daemon is killed and a request is repeated.
 *
 * Answers stream as SSE the way the real API does (message_start,
 * content_block_start / _delta / _stop, message_delta, message_stop), and a
 * reply can be streamed slowly (a pause between chunks), so a SIGKILL of the
 * daemon lands mid-stream. The server counts streams that the client left
 * before message_stop.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RequestBody {
  model?: string;
  stream?: boolean;
  messages?: Array<{ role: string; content: string | Array<Record<string, unknown>> }>;
  tools?: Array<{ name: string }>;
}

export interface Reply {
  text?: string;
  toolUses?: Array<{ name: string; input: Record<string, unknown> }>;
  /** Pause after each SSE chunk (0 = as fast as the socket takes it). */
  chunkDelayMs?: number;
  /** How many deltas each block's payload is cut into (default 2). */
  chunks?: number;
  /** Called once message_stop has been written (the client got the whole reply). */
  onDone?: () => void;
}

export interface ModelServer {
  url: string;
  stats: { requests: number; completed: number; abortedMidStream: number; bad: number };
  close(): Promise<void>;
}

let counter = 0;
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

function cut(s: string, n: number): string[] {
  if (s.length === 0) return [''];
  const size = Math.max(1, Math.ceil(s.length / n));
  const out: string[] = [];
  for (let i = 0; i < s.length; i += size) out.push(s.slice(i, i + size));
  return out;
}

export async function startModelServer(decide: (body: RequestBody) => Reply): Promise<ModelServer> {
  const stats = { requests: 0, completed: 0, abortedMidStream: 0, bad: 0 };
  const server = http.createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (d: Buffer) => parts.push(d));
    req.on('end', () => {
      stats.requests += 1;
      if (req.method !== 'POST' || !/\/v1\/messages$/.test((req.url ?? '').split('?')[0] ?? '')) {
        stats.bad += 1;
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ type: 'error', error: { type: 'not_found_error', message: `no route ${req.method} ${req.url}` } }));
        return;
      }
      let body: RequestBody;
      let reply: Reply;
      try {
        body = JSON.parse(Buffer.concat(parts).toString('utf8')) as RequestBody;
        reply = decide(body);
      } catch (e) {
        stats.bad += 1;
        res.writeHead(400, { 'content-type': 'application/json', 'x-should-retry': 'false' });
        res.end(JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message: `chaos model: ${(e as Error).message}` } }));
        return;
      }
      void stream(res, body, reply);
    });
  });

  async function stream(res: http.ServerResponse, body: RequestBody, reply: Reply) {
    let closed = false;
    res.on('close', () => {
      closed = true;
      if (!res.writableFinished) stats.abortedMidStream += 1;
    });
    const id = `msg_chaos_${++counter}`;
    const blocks: Array<Record<string, unknown>> = [];
    if (reply.text) blocks.push({ type: 'text', text: reply.text });
    for (const t of reply.toolUses ?? []) blocks.push({ type: 'tool_use', id: `toolu_chaos_${++counter}`, name: t.name, input: t.input });
    const stopReason = reply.toolUses?.length ? 'tool_use' : 'end_turn';
    const usage = { input_tokens: 100, output_tokens: 20, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
    if (!body.stream) {
      // Not used by the runtime (it always streams), but answer correctly anyway.
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id, type: 'message', role: 'assistant', model: body.model ?? 'chaos', content: blocks, stop_reason: stopReason, stop_sequence: null, usage }));
      stats.completed += 1;
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    const n = reply.chunks ?? 2;
    const send = async (event: string, data: unknown) => {
      if (closed) return;
      res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
      if (reply.chunkDelayMs) await sleep(reply.chunkDelayMs);
    };
    await send('message_start', { type: 'message_start', message: { id, type: 'message', role: 'assistant', model: body.model ?? 'chaos', content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 1 } } });
    await send('ping', { type: 'ping' });
    for (let i = 0; i < blocks.length; i++) {
      const b = blocks[i] as Record<string, unknown>;
      if (b.type === 'text') {
        await send('content_block_start', { type: 'content_block_start', index: i, content_block: { type: 'text', text: '' } });
        for (const part of cut(String(b.text), n)) await send('content_block_delta', { type: 'content_block_delta', index: i, delta: { type: 'text_delta', text: part } });
      } else {
        await send('content_block_start', { type: 'content_block_start', index: i, content_block: { type: 'tool_use', id: b.id, name: b.name, input: {} } });
        for (const part of cut(JSON.stringify(b.input), n)) await send('content_block_delta', { type: 'content_block_delta', index: i, delta: { type: 'input_json_delta', partial_json: part } });
      }
      await send('content_block_stop', { type: 'content_block_stop', index: i });
    }
    await send('message_delta', { type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: usage.output_tokens } });
    await send('message_stop', { type: 'message_stop' });
    if (closed) return;
    res.end();
    stats.completed += 1;
    reply.onDone?.();
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    stats,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The parts of a conversation the chaos scripts look at. */
export interface ConversationFacts {
  /** Text of user text blocks (not tool results), in order. */
  userTexts: string[];
  /** Text of assistant text blocks, in order. */
  assistantTexts: string[];
  /** Assistant tool_use blocks: id, name, input. */
  toolUses: Array<{ id: string; name: string; input: Record<string, unknown> }>;
  /** tool_result blocks by tool_use_id. */
  toolResults: Map<string, { text: string; isError: boolean }>;
}

export function factsOf(body: RequestBody): ConversationFacts {
  const f: ConversationFacts = { userTexts: [], assistantTexts: [], toolUses: [], toolResults: new Map() };
  for (const m of body.messages ?? []) {
    const blocks = typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : m.content;
    for (const b of blocks) {
      if (b.type === 'text') (m.role === 'user' ? f.userTexts : f.assistantTexts).push(String(b.text ?? ''));
      else if (b.type === 'tool_use') f.toolUses.push({ id: String(b.id), name: String(b.name), input: (b.input ?? {}) as Record<string, unknown> });
      else if (b.type === 'tool_result') {
        const c = b.content;
        const text = typeof c === 'string' ? c : Array.isArray(c) ? c.map((x) => String((x as { text?: unknown }).text ?? '')).join('') : '';
        f.toolResults.set(String(b.tool_use_id), { text, isError: b.is_error === true });
      }
    }
  }
  return f;
}
