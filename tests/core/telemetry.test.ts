/**
 * Issue 30, traces: a scripted run exported over OTLP/HTTP to an in-process
 * receiver (tests/helpers/otlp-receiver.ts) is one invoke_agent span with
 * its chat and execute_tool children, in the GenAI conventions; a caller's
 * traceparent joins; a child's run links to its parent's; a collector that
 * hangs neither slows a run nor grows without bound (dropped spans counted).
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { unitRun } from '../helpers/unit-run.js';
import { startOtlpReceiver, type ReceivedSpan } from '../helpers/otlp-receiver.js';
import { startTraceExport, tracesUrl } from '../../src/daemon/trace-export.js';
import { parseTraceparent, withTraceparent } from '../../src/core/telemetry/traceparent.js';
import type { Reply } from '../helpers/queued-model.js';

async function traced(t: TestContext, env: NodeJS.ProcessEnv, o: { replies?: Reply[]; agents?: Record<string, Record<string, unknown>>; captureContent?: boolean } = {}) {
  const exp = (await startTraceExport({ OTEL_BSP_SCHEDULE_DELAY: '60000', ...env }, '0.0.0-test'))!;
  assert.ok(exp, 'tracing is on with an endpoint');
  t.after(() => exp.shutdown(500));
  const u = unitRun(t, { ...(o.replies ? { replies: o.replies } : {}), ...(o.agents ? { agents: o.agents } : {}) });
  u.deps.telemetry = { tracer: exp.tracer, captureContent: o.captureContent ?? false, metrics: null };
  return { u, exp };
}

const byName = (spans: ReceivedSpan[], prefix: string) => spans.filter((s) => s.name.startsWith(prefix));

test('tracing is off unless an OTLP endpoint is set, and OTEL_SDK_DISABLED or OTEL_TRACES_EXPORTER=none turn it off', async () => {
  assert.equal(tracesUrl({}), null);
  assert.equal(await startTraceExport({}, 'x'), null);
  assert.equal(tracesUrl({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318/' }), 'http://c:4318/v1/traces');
  assert.equal(tracesUrl({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://t/x' }), 'http://t/x');
  assert.equal(tracesUrl({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SDK_DISABLED: 'true' }), null);
  assert.equal(tracesUrl({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_TRACES_EXPORTER: 'none' }), null);
});

test('one run is one invoke_agent span with chat and execute_tool children, GenAI attributes and token counts', async (t) => {
  const rx = await startOtlpReceiver();
  t.after(() => rx.close());
  const { u, exp } = await traced(t, { OTEL_EXPORTER_OTLP_ENDPOINT: rx.url, OTEL_SERVICE_NAME: 'svc-under-test' }, {
    replies: [{ tools: [{ name: 'read', input: { file_path: '/workspace/missing.txt' } }], usage: { input_tokens: 100, output_tokens: 20, cache_read_input_tokens: 7, cache_creation_input_tokens: 3 } }, { text: 'done', usage: { input_tokens: 130, output_tokens: 4 } }],
  });
  const id = u.newSession();
  u.store.appendUserEvent(id, { type: 'user.message', content: [{ type: 'text', text: 'hello' }] });
  const r = await u.run(id);
  assert.equal(r.stop_reason?.type, 'end_turn');
  await exp.shutdown(); // flushes every span to the receiver
  const [run, ...others] = byName(rx.spans, 'invoke_agent');
  assert.equal(others.length, 0, 'one invoke_agent span per run');
  assert.ok(run);
  assert.equal(run.name, 'invoke_agent unit');
  assert.equal(run.parentSpanId, '', 'a run nobody traced starts its own trace');
  assert.equal(run.resource['service.name'], 'svc-under-test');
  assert.deepEqual(
    { op: run.attributes['gen_ai.operation.name'], agent: run.attributes['gen_ai.agent.id'], conv: run.attributes['gen_ai.conversation.id'], provider: run.attributes['gen_ai.provider.name'], model: run.attributes['gen_ai.request.model'], runId: run.attributes['openboa.run.id'], outcome: run.attributes['openboa.run.outcome'] },
    { op: 'invoke_agent', agent: 'unit', conv: id, provider: 'anthropic', model: 'unit-model', runId: r.wake_id, outcome: 'end_turn' },
  );
  assert.equal(run.attributes['gen_ai.usage.input_tokens'], 230);
  assert.equal(run.attributes['gen_ai.usage.output_tokens'], 24);
  const chats = byName(rx.spans, 'chat ');
  assert.equal(chats.length, 2);
  for (const c of chats) {
    assert.equal(c.parentSpanId, run.spanId);
    assert.equal(c.traceId, run.traceId);
    assert.equal(c.name, 'chat unit-model');
    assert.equal(c.kind, 3, 'a model request is a CLIENT span');
    assert.equal(c.attributes['gen_ai.operation.name'], 'chat');
    assert.equal(c.attributes['gen_ai.conversation.id'], id);
  }
  const first = chats.find((c) => c.attributes['gen_ai.usage.input_tokens'] === 100)!;
  assert.deepEqual([first.attributes['gen_ai.usage.output_tokens'], first.attributes['gen_ai.usage.cache_read.input_tokens'], first.attributes['gen_ai.usage.cache_creation.input_tokens']], [20, 7, 3]);
  assert.deepEqual(first.attributes['gen_ai.response.finish_reasons'], ['tool_use']);
  assert.equal(first.attributes['gen_ai.input.messages'], undefined, 'no contents unless opted in');
  const [tool, ...moreTools] = byName(rx.spans, 'execute_tool');
  assert.equal(moreTools.length, 0);
  assert.equal(tool!.name, 'execute_tool read');
  assert.equal(tool!.parentSpanId, run.spanId);
  assert.equal(tool!.attributes['gen_ai.tool.name'], 'read');
  assert.equal(tool!.attributes['gen_ai.tool.call.id'], 'toolu_q_1_0');
  assert.equal(tool!.status, 2, 'a tool call that failed is an error span');
  assert.ok(tool!.startMs >= first.endMs && tool!.endMs <= run.endMs);
});

test('contents only when opted in, and then redacted with the run\'s secrets', async (t) => {
  const rx = await startOtlpReceiver();
  t.after(() => rx.close());
  const { u, exp } = await traced(t, { OTEL_EXPORTER_OTLP_ENDPOINT: rx.url }, { captureContent: true, replies: [{ text: 'the key is sk-live-TOPSECRET-123' }] });
  u.h.write('environments/local.yaml', 'env:\n  API_TOKEN: {secret: {env: API_TOKEN}}\n');
  u.deps.env.API_TOKEN = 'sk-live-TOPSECRET-123';
  const id = u.newSession();
  u.store.appendUserEvent(id, { type: 'user.message', content: [{ type: 'text', text: 'say sk-live-TOPSECRET-123' }] });
  await u.run(id);
  await exp.shutdown();
  const chat = byName(rx.spans, 'chat ')[0]!;
  const input = String(chat.attributes['gen_ai.input.messages']);
  const output = String(chat.attributes['gen_ai.output.messages']);
  assert.match(input, /say /);
  assert.match(output, /the key is/);
  assert.doesNotMatch(input + output, /TOPSECRET/);
});

test('a traceparent on the message a run takes in joins the caller\'s trace; the API\'s header joins through withTraceparent', async (t) => {
  const rx = await startOtlpReceiver();
  t.after(() => rx.close());
  const { u, exp } = await traced(t, { OTEL_EXPORTER_OTLP_ENDPOINT: rx.url });
  const caller = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
  const id = u.newSession();
  u.store.appendUserEvent(id, withTraceparent({ type: 'user.message' as const, content: [{ type: 'text' as const, text: 'hi' }] }, caller));
  await u.run(id);
  await exp.shutdown();
  const run = byName(rx.spans, 'invoke_agent')[0]!;
  assert.equal(run.traceId, '4bf92f3577b34da6a3ce929d0e0e4736');
  assert.equal(run.parentSpanId, '00f067aa0ba902b7');
  // A bad header is ignored, never a refused request.
  assert.deepEqual(withTraceparent({ type: 'user.message', content: 'x' }, 'garbage'), { type: 'user.message', content: 'x' });
  assert.equal(parseTraceparent('00-00000000000000000000000000000000-00f067aa0ba902b7-01'), null);
});

test('a child\'s run links to the run of its parent that spawned it', async (t) => {
  const rx = await startOtlpReceiver();
  t.after(() => rx.close());
  const { u, exp } = await traced(t, { OTEL_EXPORTER_OTLP_ENDPOINT: rx.url }, {
    agents: { boss: { delegates: ['worker'] }, worker: {} },
    replies: [{ tools: [{ name: 'spawn_session', input: { agent: 'worker', message: 'do it' } }] }, { text: 'spawned' }, { text: 'child done' }],
  });
  const parent = u.newSession('boss');
  u.store.appendUserEvent(parent, { type: 'user.message', content: [{ type: 'text', text: 'delegate' }] });
  await u.run(parent);
  const child = u.store.listIds().find((x) => x !== parent)!;
  await u.run(child);
  await exp.shutdown();
  const runs = byName(rx.spans, 'invoke_agent');
  const p = runs.find((s) => s.attributes['gen_ai.agent.id'] === 'boss')!;
  const c = runs.find((s) => s.attributes['gen_ai.agent.id'] === 'worker')!;
  assert.equal(p.events.filter((e) => e.name === 'openboa.child_session').length, 1);
  assert.deepEqual(c.links.map((l) => [l.traceId, l.spanId]), [[p.traceId, p.spanId]]);
  assert.equal(c.attributes['openboa.parent_session.id'], parent);
});

test('a collector that never answers slows no run, and its queue stays bounded: what does not fit is dropped and counted', async (t) => {
  const rx = await startOtlpReceiver('hang');
  t.after(() => rx.close());
  // Export at once, wait a minute for an answer that never comes, keep at most 4 spans waiting.
  const { u, exp } = await traced(t, { OTEL_EXPORTER_OTLP_ENDPOINT: rx.url, OTEL_BSP_SCHEDULE_DELAY: '1', OTEL_BSP_MAX_QUEUE_SIZE: '4', OTEL_EXPORTER_OTLP_TIMEOUT: '60000' }, { replies: [] });
  const id = u.newSession();
  const t0 = performance.now();
  for (let i = 0; i < 6; i++) {
    u.store.appendUserEvent(id, { type: 'user.message', content: [{ type: 'text', text: `m${i}` }] });
    const r = await u.run(id);
    assert.equal(r.stop_reason?.type, 'end_turn');
  }
  const took = performance.now() - t0;
  // Six runs of a scripted model take well under a second; one export waited for would take 60 s.
  assert.ok(took < 20_000, `six runs took ${took} ms with a hanging collector`);
  // 12 spans ended (a run and a request each); at most 4 are ever waiting, so at least 8 were dropped.
  assert.ok(exp.dropped() >= 8, `dropped ${exp.dropped()}`);
  // Stopping does not wait on the collector either, beyond its grace.
  const s0 = performance.now();
  await exp.shutdown(100);
  assert.ok(performance.now() - s0 < 10_000);
});

test('a confirmation a run takes in is an await_confirmation span, from the ask to the answer', async (t) => {
  const rx = await startOtlpReceiver();
  t.after(() => rx.close());
  const { u, exp } = await traced(t, { OTEL_EXPORTER_OTLP_ENDPOINT: rx.url }, {
    agents: { unit: { tools: { write: { permission: 'always_ask' } } } },
    replies: [{ tools: [{ name: 'write', input: { file_path: '/workspace/a.txt', content: 'x' } }] }, { text: 'written' }],
  });
  const id = u.newSession();
  u.store.appendUserEvent(id, { type: 'user.message', content: [{ type: 'text', text: 'write it' }] });
  assert.equal((await u.run(id)).stop_reason?.type, 'requires_action');
  const use = u.events(id).find((e) => e.type === 'agent.tool_use')!;
  await u.deps.clock.advance(90_000); // the person answers a minute and a half later
  u.store.appendUserEvent(id, { type: 'user.tool_confirmation', tool_use_id: use.id, result: 'allow' });
  await u.run(id);
  await exp.shutdown();
  const [wait, ...more] = byName(rx.spans, 'await_confirmation');
  assert.equal(more.length, 0);
  assert.equal(wait!.name, 'await_confirmation write');
  assert.equal(wait!.endMs - wait!.startMs, 90_000);
  assert.equal(wait!.attributes['openboa.confirmation.result'], 'allow');
  const second = byName(rx.spans, 'invoke_agent').find((s) => s.spanId === wait!.parentSpanId);
  assert.equal(second?.attributes['openboa.run.trigger'], 'event');
});
