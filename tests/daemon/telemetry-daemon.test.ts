/**
 * Issue 30, end to end: `openboa daemon` (the built CLI) with
 * OTEL_EXPORTER_OTLP_ENDPOINT set exports its runs' spans to a collector
 * (an in-process receiver), and flushes them as it stops.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { tempHome } from '../helpers/home.js';
import { writeAgent } from '../helpers/run.js';
import { startFakeAnthropic } from '../helpers/fake-anthropic.js';
import { spawnDaemon } from '../helpers/daemon-process.js';
import { cli } from '../helpers/cli.js';
import { startOtlpReceiver } from '../helpers/otlp-receiver.js';

test('the daemon exports a run as invoke_agent and chat spans when OTEL_EXPORTER_OTLP_ENDPOINT is set', { timeout: 120_000 }, async (t) => {
  const h = tempHome(t);
  const fake = await startFakeAnthropic([{ text: 'hello there' }]);
  t.after(() => fake.close());
  const rx = await startOtlpReceiver();
  t.after(() => rx.close());
  writeAgent(h, 'test');
  const env = { ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: fake.url, OTEL_EXPORTER_OTLP_ENDPOINT: rx.url, OTEL_SERVICE_NAME: 'openboa-e2e' };
  const d = spawnDaemon(t, h.root, env);
  const started = await d.line((l) => l.kind === 'daemon_started');
  assert.equal(started.traces, 'otlp');
  const id = (await cli(['session', 'create', '--agent', 'test'], { home: h.root })).stdout.trim();
  await cli(['send', id, 'hi'], { home: h.root });
  await d.line((l) => l.kind === 'run_end' && l.session_id === id);
  assert.equal(await d.term(), 0); // stopping flushes what is queued
  const run = rx.spans.find((s) => s.name === 'invoke_agent test');
  assert.ok(run, `spans: ${rx.spans.map((s) => s.name).join(', ')}`);
  assert.equal(run.attributes['gen_ai.conversation.id'], id);
  assert.equal(run.resource['service.name'], 'openboa-e2e');
  const chat = rx.spans.find((s) => s.name === 'chat fake-model');
  assert.equal(chat?.parentSpanId, run.spanId);
});
