/**
 * Events through the real @anthropic-ai/sdk client: send, stream until the
 * turn ends, list with paging, confirm a tool, answer a custom tool,
 * interrupt a run, and resume a stream after a disconnect.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { BetaManagedAgentsStreamSessionEvents } from '@anthropic-ai/sdk/resources/beta/sessions/events';
import { accumulateManagedAgentsEvent, type AccumulatedEvent } from '@anthropic-ai/sdk/lib/sessions/accumulate';
import { apiBench } from './api-bench.js';
import { previewHub } from '../../src/core/run/preview-hub.js';
import { startDaemon } from '../helpers/daemon.js';

type StreamEvent = BetaManagedAgentsStreamSessionEvents;

/** Reads `stream` until `until` holds for an event (that one included); the stream stays open for the next read. */
async function readUntil(stream: AsyncIterable<StreamEvent>, until: (e: StreamEvent) => boolean): Promise<StreamEvent[]> {
  const it = iterators.get(stream) ?? stream[Symbol.asyncIterator]();
  iterators.set(stream, it);
  const out: StreamEvent[] = [];
  for (;;) {
    const r = await it.next();
    if (r.done) throw new Error(`the stream ended after ${out.map((e) => e.type).join(', ')}`);
    out.push(r.value);
    if (until(r.value)) return out;
  }
}
const iterators = new WeakMap<object, AsyncIterator<StreamEvent>>();

const idle = (e: StreamEvent) => e.type === 'session.status_idle';

test('send a message, for-await the stream until session.status_idle; the echo and the stream agree with the log', async (t) => {
  const b = await apiBench(t, { steps: [{ text: 'hello back' }] });
  const s = await b.client.beta.sessions.create({ agent: 'test', environment_id: 'local' });
  const stream = await b.client.beta.sessions.events.stream(s.id);
  const sent = await b.client.beta.sessions.events.send(s.id, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'hi' }] }] });
  assert.equal(sent.data?.length, 1);
  assert.equal(sent.data![0]!.type, 'user.message');
  assert.equal(sent.data![0]!.processed_at, null);
  const run = b.wake(s.id);
  const seen = await readUntil(stream, idle);
  await run;
  assert.deepEqual(seen.map((e) => e.type), ['user.message', 'session.status_running', 'span.model_request_start', 'agent.message', 'span.model_request_end', 'session.status_idle']);
  assert.equal(seen[0]!.type === 'user.message' && seen[0]!.id, sent.data![0]!.id);
  const msg = seen.find((e) => e.type === 'agent.message');
  assert.deepEqual(msg?.type === 'agent.message' && msg.content, [{ type: 'text', text: 'hello back' }]);
  const end = seen[seen.length - 1]!;
  assert.deepEqual(end.type === 'session.status_idle' && end.stop_reason, { type: 'end_turn' });
  // The run's proof is the runtime's: it never leaves.
  assert.ok(seen.every((e) => !('proof' in e)));
  const after = await b.client.beta.sessions.retrieve(s.id);
  assert.equal(after.status, 'idle');
  assert.deepEqual((after as unknown as { stop_reason: unknown }).stop_reason, { type: 'end_turn' });
  assert.equal(after.usage.output_tokens! > 0, true);
});

test('list events with paging, types[] and order; user events carry processed_at once a run took them in', async (t) => {
  const b = await apiBench(t, { steps: [{ text: 'one' }] });
  const s = await b.client.beta.sessions.create({ agent: 'test', environment_id: 'local', initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'go' }] }] });
  await b.wake(s.id);
  const all: string[] = [];
  for await (const e of b.client.beta.sessions.events.list(s.id, { limit: 2 })) all.push(e.id);
  const log = b.events(s.id).map((e) => e.id);
  assert.deepEqual(all, log);
  const first = await b.client.beta.sessions.events.list(s.id, { limit: 2 });
  assert.equal(first.data.length, 2);
  assert.ok(first.hasNextPage());
  const desc = await b.client.beta.sessions.events.list(s.id, { order: 'desc', limit: 1 });
  assert.equal(desc.data[0]!.id, log[log.length - 1]);
  const msgs = await b.client.beta.sessions.events.list(s.id, { types: ['user.message', 'agent.message'] });
  assert.deepEqual(msgs.data.map((e) => e.type), ['user.message', 'agent.message']);
  const running = b.events(s.id).find((e) => e.type === 'session.status_running')!;
  assert.equal(msgs.data[0]!.processed_at, running.created_at);
});

test('a tool that asks waits for user.tool_confirmation; a custom tool for user.custom_tool_result (both sent with the SDK)', async (t) => {
  const b = await apiBench(t, {
    agent: { tools: { write: { permission: 'always_ask' } }, custom_tools: [{ name: 'approve_budget', description: 'Ask finance', input_schema: { type: 'object' } }] },
    steps: [
      { toolUses: [{ id: 'toolu_w', name: 'write', input: { file_path: 'report.md', content: 'numbers' } }, { id: 'toolu_c', name: 'approve_budget', input: { amount: 5 } }] },
      { text: 'done' },
    ],
  });
  const s = await b.client.beta.sessions.create({ agent: 'test', environment_id: 'local', initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'write it' }] }] });
  const first = await b.wake(s.id);
  assert.equal(first.stop_reason?.type, 'requires_action');
  const events = await b.client.beta.sessions.events.list(s.id, { types: ['agent.tool_use', 'agent.custom_tool_use'] });
  const ask = events.data.find((e) => e.type === 'agent.tool_use')!;
  const custom = events.data.find((e) => e.type === 'agent.custom_tool_use')!;
  // A wrong answer is refused, naming the event and why.
  await assert.rejects(
    b.client.beta.sessions.events.send(s.id, { events: [{ type: 'user.tool_confirmation', tool_use_id: custom.id, result: 'allow' }] }),
    (e: { status?: number; message?: string }) => e.status === 400 && /events\.0: .*custom tool use/.test(e.message ?? ''),
  );
  await b.client.beta.sessions.events.send(s.id, {
    events: [
      { type: 'user.tool_confirmation', tool_use_id: ask.id, result: 'allow' },
      { type: 'user.custom_tool_result', custom_tool_use_id: custom.id, content: [{ type: 'text', text: 'approved' }] },
    ],
  });
  const second = await b.wake(s.id);
  assert.equal(second.stop_reason?.type, 'end_turn');
  const results = b.events(s.id).filter((e) => e.type === 'agent.tool_result');
  assert.equal(results.length, 1);
  const req = b.fake.requests[1]!;
  const last = req.body.messages[req.body.messages.length - 1]!.content as Array<Record<string, unknown>>;
  assert.ok(last.some((x) => x.type === 'tool_result' && x.tool_use_id === 'toolu_c' && JSON.stringify(x.content).includes('approved')));
});

test('user.interrupt sent with the SDK stops a run in progress (daemon in the process)', async (t) => {
  let daemon: { evaluate(id: string): boolean } | null = null;
  const b = await apiBench(t, { steps: [{ hang: true }], onAppend: (id) => daemon?.evaluate(id) });
  const td = await startDaemon(t, b);
  daemon = td.d;
  const s = await b.client.beta.sessions.create({ agent: 'test', environment_id: 'local' });
  const stream = await b.client.beta.sessions.events.stream(s.id);
  await b.client.beta.sessions.events.send(s.id, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'think forever' }] }] });
  await readUntil(stream, (e) => e.type === 'span.model_request_start');
  await b.client.beta.sessions.events.send(s.id, { events: [{ type: 'user.interrupt' }] });
  const rest = await readUntil(stream, idle);
  assert.deepEqual(rest.map((e) => e.type).slice(0, 1), ['user.interrupt']);
  const end = rest[rest.length - 1]!;
  assert.deepEqual(end.type === 'session.status_idle' && end.stop_reason, { type: 'end_turn' });
});

test('resume after a disconnect: stream, then list, drop duplicates by id: nothing lost, nothing doubled', async (t) => {
  const b = await apiBench(t, { steps: [{ text: 'first answer' }, { text: 'second answer' }] });
  const s = await b.client.beta.sessions.create({ agent: 'test', environment_id: 'local' });
  const seen = new Map<string, StreamEvent>();
  const keep = (e: StreamEvent) => {
    if ('id' in e && !seen.has(e.id)) seen.set(e.id, e);
  };
  const first = await b.client.beta.sessions.events.stream(s.id);
  await b.client.beta.sessions.events.send(s.id, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'one' }] }] });
  await b.wake(s.id);
  // Read until the run's model request started, then drop the connection mid-turn.
  for (const e of await readUntil(first, (x) => x.type === 'span.model_request_start')) keep(e);
  first.controller.abort();
  // The server let go of the client (and of the session's subscription with it).
  await b.server.api.hub.whenClients(0);
  assert.deepEqual(b.server.api.hub.stats, { sessions: 0, clients: 0 });
  // While disconnected, the rest of the turn and a whole second turn happen.
  await b.client.beta.sessions.events.send(s.id, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'two' }] }] });
  await b.wake(s.id);
  // The recipe: open the stream first, then list history, drop duplicates by id.
  const second = await b.client.beta.sessions.events.stream(s.id);
  for await (const e of b.client.beta.sessions.events.list(s.id, { limit: 3 })) keep(e);
  await b.client.beta.sessions.events.send(s.id, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'three' }] }] });
  for (const e of await readUntil(second, (x) => x.type === 'user.message')) keep(e);
  const log = b.events(s.id).map((e) => e.id);
  assert.equal(seen.size, log.length);
  assert.deepEqual([...seen.keys()].sort(), [...log].sort());
});

test('event_deltas: the reply streams as event_start / event_delta previews that accumulateManagedAgentsEvent merges into the final agent.message; never in the log; none without event_deltas', async (t) => {
  const text = 'hello back, in several pieces as the model writes it';
  const b = await apiBench(t, { steps: [{ thinking: { thinking: 'let me think', signature: 'sig' }, text }] });
  const s = await b.client.beta.sessions.create({ agent: 'test', environment_id: 'local' });
  const previewed = await b.client.beta.sessions.events.stream(s.id, { event_deltas: ['agent.message', 'agent.thinking'] });
  const plain = await b.client.beta.sessions.events.stream(s.id);
  await b.server.api.hub.whenClients(2);
  await b.client.beta.sessions.events.send(s.id, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'hi' }] }] });
  const run = b.wake(s.id);
  const seen = await readUntil(previewed, idle);
  const whole = await readUntil(plain, idle);
  await run;

  const final = seen.find((e) => e.type === 'agent.message');
  const thinking = seen.find((e) => e.type === 'agent.thinking');
  assert.ok(final?.type === 'agent.message' && thinking);
  const starts = seen.filter((e) => e.type === 'event_start');
  assert.deepEqual(starts.map((e) => e.type === 'event_start' && e.event), [{ id: thinking.id, type: 'agent.thinking' }, { id: final.id, type: 'agent.message' }], 'each preview carries the id of the event it becomes');
  const deltas = seen.filter((e) => e.type === 'event_delta');
  assert.ok(deltas.length >= 2, `the text came in pieces (${deltas.length})`);
  assert.ok(deltas.every((e) => e.type === 'event_delta' && e.event_id === final.id), 'agent.thinking previews are start-only');
  // What the SDK's helper accumulates from the previews, before the final event arrives, is the final event's content.
  let acc: AccumulatedEvent | undefined;
  for (const e of seen.slice(0, seen.indexOf(final))) acc = accumulateManagedAgentsEvent(acc, e);
  assert.equal(acc?.id, final.id);
  assert.deepEqual(acc?.content, final.content);
  assert.deepEqual(final.content, [{ type: 'text', text }]);

  // Previews are the stream's only: not in the log, not in a listing, not on a stream that did not ask.
  const isPreview = (type: string) => type === 'event_start' || type === 'event_delta';
  assert.ok(b.events(s.id).every((e) => !isPreview(e.type)));
  const listed = await b.client.beta.sessions.events.list(s.id, { limit: 100 });
  assert.ok(listed.data.every((e) => !isPreview(e.type)));
  assert.deepEqual(whole.map((e) => e.type), seen.filter((e) => !isPreview(e.type)).map((e) => e.type));
  assert.ok(whole.every((e) => !isPreview(e.type)));
  // The last client gone, nothing is watched for the session any more.
  assert.equal(previewHub.watched(s.id), true);
  previewed.controller.abort();
  plain.controller.abort();
  await b.server.api.hub.whenClients(0);
  assert.equal(previewHub.watched(s.id), false);
});

test('event_deltas on a server no run shares a process with: whole events, and the response says so', async (t) => {
  const { startApiServer } = await import('../../src/http/server.js');
  const { parseListen } = await import('../../src/http/listen-address.js');
  const b = await apiBench(t);
  const alone = await startApiServer(b.rt, parseListen('127.0.0.1:0'), { apiKey: 'another-key-0123456789' });
  t.after(() => alone.close());
  const s = b.session();
  const res = await fetch(`${alone.url}/v1/sessions/${s}/events/stream?event_deltas[]=agent.message`, { headers: { 'x-api-key': 'another-key-0123456789' } });
  assert.equal(res.headers.get('openboa-event-deltas'), 'unavailable');
  const reader = res.body!.getReader();
  let got = '';
  while (!got.includes('event_deltas not served')) got += new TextDecoder().decode((await reader.read()).value);
  await reader.cancel();
  const served = await fetch(`${b.server.url}/v1/sessions/${s}/events/stream?event_deltas[]=agent.message`, { headers: { 'x-api-key': 'test-api-key-0123456789' } });
  assert.equal(served.headers.get('openboa-event-deltas'), 'served');
  await served.body!.cancel();
});
