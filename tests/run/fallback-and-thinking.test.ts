/**
 * The fallback model and extended thinking end to end: the real
 * @anthropic-ai/sdk (with its own retries: 3 HTTP requests per attempt)
 * against the scripted Messages API server, the real store, a manual clock.
 * What reaches the wire is read from the recorded requests.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import YAML from 'yaml';
import { bench, type Bench } from '../helpers/run.js';
import { validateLog } from '../helpers/event-schema.js';
import type { RecordedRequest, Step } from '../helpers/fake-anthropic.js';
import { sendMessage, defineOutcome } from '../../src/core/ops/session-ops.js';
import type { SessionEvent } from '../../src/core/schema/index.js';

/** A 529 the SDK retries after 1 ms (its default waits 0.5 s, then 1 s: real time). */
const overloaded: Step = { status: 529, errorType: 'overloaded_error', message: 'Overloaded', headers: { 'retry-after-ms': '1' } };
/** One failed attempt: the SDK tries three times. */
const failedAttempt = [overloaded, overloaded, overloaded];

function agent(b: Bench, fields: Record<string, unknown>) {
  b.h.write('agents/test/agent.yaml', YAML.stringify({ provider: 'anthropic', model: 'fake-model', system: 'You are a test agent.', environment: 'local', ...fields }));
}

type Raw = RecordedRequest['raw'] & { thinking?: unknown; tool_choice?: unknown };
const raw = (r: RecordedRequest) => r.raw as Raw;
const starts = (ev: SessionEvent[]) => ev.filter((e): e is Extract<SessionEvent, { type: 'span.model_request_start' }> => e.type === 'span.model_request_start');

/** Wakes the session once its backoff is over. */
async function retry(b: Bench, id: string, r: { retry_at: string | null }) {
  await b.deps.clock.advance(Date.parse(r.retry_at!) - b.deps.clock.now());
  return b.wake(id);
}

test('after two failed attempts the next one asks fallback_model, and the log says so; a success goes back to the main model', async (t) => {
  const b = await bench(t, {
    steps: [...failedAttempt, ...failedAttempt, ...failedAttempt, { text: 'from the fallback' }, { text: 'from the main model' }],
  });
  agent(b, { fallback_model: 'fake-fallback' });
  const id = b.session('please answer');

  const r1 = await b.wake(id);
  assert.equal(r1.status, 'rescheduling');
  const r2 = await retry(b, id, r1);
  assert.equal(r2.status, 'rescheduling');
  assert.equal(b.store.snapshot(id).consecutive_failures, 2);
  // Two failed attempts: the third goes to the fallback, which fails too (3 requests) and stays in use.
  const r3 = await retry(b, id, r2);
  assert.equal(r3.status, 'rescheduling');
  const r4 = await retry(b, id, r3);
  assert.deepEqual(r4.stop_reason, { type: 'end_turn' });
  assert.equal(b.store.snapshot(id).consecutive_failures, 0, 'a run that ends well resets the count');

  sendMessage(b.store, id, 'again');
  const r5 = await b.wake(id);
  assert.deepEqual(r5.stop_reason, { type: 'end_turn' });

  const models = b.fake.requests.map((r) => r.body.model);
  assert.deepEqual(models, [
    ...Array(6).fill('fake-model'),
    ...Array(3).fill('fake-fallback'),
    'fake-fallback',
    'fake-model',
  ]);
  // The fallback's conversation is the same one: the message entered once.
  assert.deepEqual(b.fake.requests[9]!.body.messages, [{ role: 'user', content: [{ type: 'text', text: 'please answer' }] }]);

  const ev = b.events(id);
  const spans = starts(ev);
  assert.deepEqual(spans.map((s) => s.model), ['fake-model', 'fake-model', 'fake-fallback', 'fake-fallback', 'fake-model'], 'every request names its model');
  assert.deepEqual(spans.map((s) => s.fallback ?? null), [null, null, { from: 'fake-model', failures: 2 }, { from: 'fake-model', failures: 3 }, null], 'a fallback request says what it stands in for, and why');
  const messages = ev.flatMap((e) => (e.type === 'agent.message' ? [e.content[0]!.text] : []));
  assert.deepEqual(messages, ['from the fallback', 'from the main model']);
  assert.deepEqual(validateLog(b.store.paths(id).events).errors, []);
});

test('fallback_after sets how many failed attempts come first; without fallback_model the main model is always used', async (t) => {
  const b = await bench(t, { steps: [...failedAttempt, { text: 'fallback at once' }] });
  agent(b, { fallback_model: 'fake-fallback', fallback_after: 1 });
  const id = b.session('hi');
  const r1 = await b.wake(id);
  await retry(b, id, r1);
  assert.deepEqual(b.fake.requests.map((r) => r.body.model), ['fake-model', 'fake-model', 'fake-model', 'fake-fallback']);

  const c = await bench(t, { steps: [...failedAttempt, ...failedAttempt, ...failedAttempt, { text: 'still main' }] });
  agent(c, {});
  const id2 = c.session('hi');
  let r = await c.wake(id2);
  for (let i = 0; i < 3; i++) r = await retry(c, id2, r);
  assert.deepEqual(r.stop_reason, { type: 'end_turn' });
  assert.ok(c.fake.requests.every((q) => q.body.model === 'fake-model'));
  assert.ok(starts(c.events(id2)).every((s) => s.fallback === undefined));
});

for (const [setting, budget] of [
  ['medium', 8192],
  [3000, 3000],
] as const) {
  test(`thinking: ${setting} reaches the request as a budget of ${budget}, max_tokens grows by it, and thinking blocks go back before the tool call`, async (t) => {
    const b = await bench(t, {
      steps: [
        { thinking: { thinking: 'I should look first.', signature: 'sig-1' }, toolUses: [{ id: 'toolu_x', name: 'nosuchtool', input: {} }] },
        { thinking: { thinking: 'Now answer.', signature: 'sig-2' }, text: 'done' },
      ],
    });
    agent(b, { thinking: setting });
    const id = b.session('think about it');
    const r = await b.wake(id);
    assert.deepEqual(r.stop_reason, { type: 'end_turn' });
    assert.equal(b.fake.requests.length, 2);
    for (const q of b.fake.requests) {
      assert.deepEqual(raw(q).thinking, { type: 'enabled', budget_tokens: budget });
      assert.equal(q.body.max_tokens, 8192 + budget);
    }
    // The reply as the model sent it: its thinking block (with the signature) opens the assistant turn, before the tool_use.
    const second = b.fake.requests[1]!.body.messages;
    assert.deepEqual(second[1], {
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'I should look first.', signature: 'sig-1' },
        { type: 'tool_use', id: 'toolu_x', name: 'nosuchtool', input: {} },
      ],
    });
    assert.equal(second[2]!.role, 'user');
    assert.equal((second[2]!.content as Array<Record<string, unknown>>)[0]!.type, 'tool_result');
    const thinking = b.events(id).filter((e) => e.type === 'agent.thinking');
    assert.equal(thinking.length, 2, 'both thinking blocks are in the log');
    assert.deepEqual(validateLog(b.store.paths(id).events).errors, []);
  });
}

test('thinking: off (the default) sends no thinking parameter and max_tokens is max_output_tokens', async (t) => {
  const b = await bench(t, { steps: [{ text: 'a' }, { text: 'b' }] });
  agent(b, { limits: { max_output_tokens: 4000 } });
  const id = b.session('hi');
  await b.wake(id);
  agent(b, { thinking: 'off', limits: { max_output_tokens: 4000 } });
  sendMessage(b.store, id, 'again');
  await b.wake(id);
  assert.equal(b.fake.requests.length, 2);
  for (const q of b.fake.requests) {
    assert.equal('thinking' in raw(q), false);
    assert.equal(q.body.max_tokens, 4000);
  }
});

test('thinking switched on in the middle of a tool loop: that request goes without it (the API would refuse it), the next turn thinks', async (t) => {
  const b = await bench(t, {
    steps: [{ toolUses: [{ id: 'toolu_a', name: 'nosuchtool', input: {} }] }, { text: 'after the tool' }, { thinking: { thinking: 'hm', signature: 's' }, text: 'next turn' }],
  });
  agent(b, { limits: { max_model_requests_per_wake: 1 } });
  const id = b.session('go');
  const r1 = await b.wake(id);
  assert.deepEqual(r1.stop_reason, { type: 'retries_exhausted' }, 'the run stops after one request, inside the tool loop');
  agent(b, { thinking: 'low' });
  sendMessage(b.store, id, 'go on');
  await b.wake(id);
  sendMessage(b.store, id, 'and now');
  await b.wake(id);
  assert.equal(b.fake.requests.length, 3);
  assert.equal('thinking' in raw(b.fake.requests[0]!), false);
  // The second request continues the tool loop whose assistant turn has no thinking block.
  const second = b.fake.requests[1]!;
  assert.equal((second.body.messages[1]!.content as Array<Record<string, unknown>>)[0]!.type, 'tool_use');
  assert.equal('thinking' in raw(second), false);
  assert.deepEqual(raw(b.fake.requests[2]!).thinking, { type: 'enabled', budget_tokens: 2048 });
});

test('the rubric grader\'s request forces its tool and never carries thinking', async (t) => {
  const b = await bench(t, {
    steps: [
      { thinking: { thinking: 'plan', signature: 'sig' }, text: 'the haiku is done' },
      { toolUses: [{ name: 'grade_outcome', input: { result: 'satisfied', explanation: 'fine' } }] },
    ],
  });
  agent(b, { thinking: 'high' });
  const id = b.session();
  defineOutcome(b.store, id, { description: 'write a haiku', rubric: '1. three lines' });
  const r = await b.wake(id);
  assert.deepEqual(r.outcome_evaluations.map((e) => e.result), ['satisfied']);
  assert.equal(b.fake.requests.length, 2);
  const [work, grader] = b.fake.requests as [RecordedRequest, RecordedRequest];
  assert.deepEqual(raw(work).thinking, { type: 'enabled', budget_tokens: 16384 });
  assert.deepEqual(raw(grader).tool_choice, { type: 'tool', name: 'grade_outcome' });
  assert.equal('thinking' in raw(grader), false);
});
