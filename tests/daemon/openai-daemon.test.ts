/** The daemon with an openai agent: an interrupt appended to the log cancels a slow Chat Completions stream. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import YAML from 'yaml';
import { bench } from '../helpers/run.js';
import { startDaemon } from '../helpers/daemon.js';
import { startFakeOpenAI } from '../helpers/fake-openai.js';
import { validateLog } from '../helpers/event-schema.js';

// As for the anthropic provider (interrupt-shutdown.test.ts): the bound tells an abort from a finish (the reply
// streams for ~25 s) with room for a loaded machine; how fast an interrupt lands is measured in-process.
test('an interrupt during a slow Chat Completions stream aborts the HTTP request and closes the turn', async (t) => {
  const b = await bench(t, { env: { OAI_TEST_KEY: 'sk-daemon-test' } });
  const oai = await startFakeOpenAI([{ text: 'a'.repeat(40), delayMs: 5000 }]);
  t.after(() => oai.close());
  b.h.write('agents/oai/agent.yaml', YAML.stringify({ provider: 'openai', model: 'local-model', base_url: oai.url, api_key: { secret: { env: 'OAI_TEST_KEY' } } }));
  const id = b.session('talk slowly', 'oai');
  const td = await startDaemon(t, b);
  await oai.streaming(0);
  const t0 = Date.now();
  fs.appendFileSync(b.store.paths(id).events, '{"type":"user.interrupt","reason":"stop"}\n');
  const r = await td.result((x) => x.session_id === id && x.outcome === 'executed');
  assert.ok(Date.now() - t0 < 10_000, `idle after ${Date.now() - t0} ms`);
  assert.deepEqual(r.stop_reason, { type: 'end_turn' });
  await oai.closed(0);
  assert.equal(oai.requests[0]!.aborted, true, 'the HTTP request was aborted');
  assert.ok(!b.events(id).some((e) => e.type === 'agent.message'), 'no half reply in the log');
  assert.equal(b.store.snapshot(id).pending_events.length, 0, 'the interrupt was taken in');
  assert.deepEqual(validateLog(b.store.paths(id).events).errors, []);
});
