/**
 * Issue 30, metrics: scraped over HTTP and parsed strictly as the
 * Prometheus text format, the counters move by exactly what a scripted run
 * did; labels carry no session id; `openboa daemon --metrics-listen` serves
 * them.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { unitRun } from '../helpers/unit-run.js';
import { parseExposition } from '../helpers/prom-text.js';
import { DaemonMetrics } from '../../src/daemon/metrics.js';
import { listenMetrics, parseListenAddress } from '../../src/daemon/metrics-listener.js';
import { tempHome } from '../helpers/home.js';
import { writeAgent } from '../helpers/run.js';
import { startFakeAnthropic } from '../helpers/fake-anthropic.js';
import { spawnDaemon } from '../helpers/daemon-process.js';
import { cli } from '../helpers/cli.js';

const PRICE = { input: 3, output: 15, cache_write: 3.75, cache_read: 0.3 };

async function scrape(url: string) {
  const res = await fetch(url);
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
  return parseExposition(await res.text());
}

test('a scripted run moves every counter by exactly what it did; no label holds a session id', async (t) => {
  const u = unitRun(t, {
    agents: { unit: { pricing: { 'unit-model': PRICE } } },
    replies: [
      { tools: [{ name: 'read', input: { file_path: '/workspace/missing.txt' } }], usage: { input_tokens: 1000, output_tokens: 200, cache_read_input_tokens: 70, cache_creation_input_tokens: 30 } },
      { text: 'done', usage: { input_tokens: 1300, output_tokens: 40 } },
    ],
  });
  const m = new DaemonMetrics({ store: u.store, clock: u.deps.clock });
  const l = await listenMetrics('127.0.0.1:0', m);
  t.after(() => l.close());
  u.deps.telemetry = { tracer: null, captureContent: false, metrics: m };
  const url = `http://127.0.0.1:${l.port}/metrics`;

  const id = u.newSession();
  const before = await scrape(url);
  assert.equal(before.value('openboa_runs_total', { agent: 'unit' }), undefined);
  u.store.appendUserEvent(id, { type: 'user.message', content: [{ type: 'text', text: 'go' }] });
  await u.deps.clock.advance(1500); // the message waited 1.5 s before its run
  const r = await u.run(id);
  assert.equal(r.stop_reason?.type, 'end_turn');

  const x = await scrape(url);
  const model = { provider: 'anthropic', model: 'unit-model' };
  assert.equal(x.types.get('openboa_runs_total'), 'counter');
  assert.equal(x.value('openboa_runs_total', { agent: 'unit', outcome: 'end_turn' }), 1);
  assert.equal(x.value('openboa_run_duration_seconds_count', { agent: 'unit' }), 1);
  assert.equal(x.value('openboa_append_to_running_seconds_count'), 1);
  assert.equal(x.value('openboa_append_to_running_seconds_sum'), 1.5);
  assert.equal(x.value('openboa_model_requests_total', { ...model, result: 'ok' }), 2);
  assert.equal(x.value('openboa_model_request_duration_seconds_count', model), 2);
  assert.deepEqual(
    ['input', 'output', 'cache_read', 'cache_write'].map((type) => x.value('openboa_model_tokens_total', { ...model, type })),
    [2300, 240, 70, 30],
  );
  const cost = (2300 * 3 + 240 * 15 + 30 * 3.75 + 70 * 0.3) / 1e6;
  assert.ok(Math.abs(x.value('openboa_cost_usd_total', { agent: 'unit', model: 'unit-model' })! - cost) < 1e-9);
  assert.ok(Math.abs(u.store.snapshot(id).usage.cost_usd - cost) < 1e-9, 'the metric says what the log says');
  assert.equal(x.value('openboa_tool_calls_total', { tool: 'read', result: 'error' }), 1);
  assert.equal(x.value('openboa_sessions', { status: 'idle' }), 1);
  assert.equal(x.value('openboa_pending_revisits'), 0);
  assert.ok(x.value('process_resident_memory_bytes')! > 0, 'RSS');
  assert.notEqual(x.value('nodejs_eventloop_lag_seconds'), undefined, 'event-loop lag');
  const leaks = x.samples.filter((s) => Object.values(s.labels).some((v) => v.includes(id)) || 'session' in s.labels || 'session_id' in s.labels);
  assert.deepEqual(leaks, []);

  // A second run: each counter moves by that run alone.
  u.store.appendUserEvent(id, { type: 'user.message', content: [{ type: 'text', text: 'again' }] });
  await u.run(id);
  const y = await scrape(url);
  assert.equal(y.value('openboa_runs_total', { agent: 'unit', outcome: 'end_turn' }), 2);
  assert.equal(y.value('openboa_model_requests_total', { ...model, result: 'ok' }), 3);
  assert.equal(y.value('openboa_model_tokens_total', { ...model, type: 'input' }), 2310);
  assert.equal(y.value('openboa_tool_calls_total', { tool: 'read', result: 'error' }), 1);
});

test('a model with no price is counted as unpriced, not as costing nothing', async (t) => {
  const u = unitRun(t, { replies: [{ text: 'hi' }] });
  const m = new DaemonMetrics({ store: u.store, clock: u.deps.clock });
  u.deps.telemetry = { tracer: null, captureContent: false, metrics: m };
  const id = u.newSession();
  u.store.appendUserEvent(id, { type: 'user.message', content: [{ type: 'text', text: 'go' }] });
  await u.run(id);
  const x = parseExposition((await m.scrape()).body);
  assert.equal(x.value('openboa_model_requests_unpriced_total', { agent: 'unit', model: 'unit-model' }), 1);
  assert.equal(x.value('openboa_cost_usd_total', { agent: 'unit', model: 'unit-model' }), undefined);
});

test('--metrics-listen takes HOST:PORT and says what is wrong otherwise', () => {
  assert.deepEqual(parseListenAddress('127.0.0.1:9464'), { host: '127.0.0.1', port: 9464 });
  assert.deepEqual(parseListenAddress('[::1]:0'), { host: '::1', port: 0 });
  assert.throws(() => parseListenAddress('9464'), /--metrics-listen: expected HOST:PORT \(e\.g\. 127\.0\.0\.1:9464\), got "9464"/);
  assert.throws(() => parseListenAddress('localhost:70000'), /expected HOST:PORT/);
});

test('openboa daemon --metrics-listen serves /metrics, and counts the runs it did', { timeout: 120_000 }, async (t) => {
  const h = tempHome(t);
  const fake = await startFakeAnthropic([{ text: 'hello there' }]);
  t.after(() => fake.close());
  writeAgent(h, 'test');
  const env = { ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: fake.url };
  const d = spawnDaemon(t, h.root, env, ['--metrics-listen', '127.0.0.1:0']);
  const started = await d.line((l) => l.kind === 'daemon_started');
  const url = String(started.metrics);
  assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
  const id = (await cli(['session', 'create', '--agent', 'test'], { home: h.root })).stdout.trim();
  await cli(['send', id, 'hi'], { home: h.root });
  await d.line((l) => l.kind === 'run_end' && l.session_id === id);
  const x = await scrape(url);
  assert.equal(x.value('openboa_runs_total', { agent: 'test', outcome: 'end_turn' }), 1);
  assert.equal(x.value('openboa_model_requests_total', { provider: 'anthropic', model: 'fake-model', result: 'ok' }), 1);
  const other = await fetch(url.replace('/metrics', '/other'));
  assert.equal(other.status, 404);
  assert.equal(await d.term(), 0);
});
