import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { bench, textOf } from '../helpers/run.js';
import { validateLog } from '../helpers/event-schema.js';
import type { SessionEvent } from '../../src/core/schema/index.js';
import { DEAD_RUN } from '../helpers/run-ids.js';

const errorsOf = (ev: SessionEvent[]) => ev.filter((e): e is Extract<SessionEvent, { type: 'session.error' }> => e.type === 'session.error');

test('a 400 is a terminal session.error; the turn ends retries_exhausted; a consumed wake is scheduled again', async (t) => {
  const b = await bench(t, { steps: [{ status: 400, errorType: 'invalid_request_error', message: 'messages: bad' }] });
  const id = b.session();
  const w = b.store.scheduleWake(id, { due_at: new Date(b.deps.clock.now()).toISOString(), reason: 'check in', source: 'cli' });
  const r = await b.wake(id);
  assert.equal(b.fake.requests.length, 1, '4xx is not retried');
  assert.deepEqual(r.stop_reason, { type: 'retries_exhausted' });
  const [err] = errorsOf(b.events(id));
  assert.equal(err!.error.type, 'model_request_failed_error');
  assert.equal(err!.error.code, 'http_400');
  assert.equal(err!.error.retry_status.type, 'terminal');
  assert.match(err!.error.message, /messages: bad/);
  const end = b.events(id).find((e) => e.type === 'span.model_request_end');
  assert.equal(end?.type === 'span.model_request_end' && end.is_error, true);
  const snap = b.store.snapshot(id);
  assert.equal(snap.pending_wakes.length, 1);
  assert.equal(snap.pending_wakes[0]!.retry_of, w.id);
  assert.equal(snap.pending_wakes[0]!.source, 'retry');
  assert.equal(snap.pending_wakes[0]!.reason, 'check in');
  assert.deepEqual(validateLog(b.store.paths(id).events).errors, []);
});

for (const [status, type] of [
  [429, 'model_rate_limited_error'],
  [529, 'model_overloaded_error'],
] as const) {
  test(`a ${status} that outlives the SDK's retries: session.error retrying + status_rescheduled with backoff, then the same conversation goes on`, async (t) => {
    const fail = { status, errorType: status === 429 ? 'rate_limit_error' : 'overloaded_error' };
    const b = await bench(t, { steps: [fail, fail, fail, fail, fail, fail, { text: 'finally' }] });
    const id = b.session('please answer');
    const r1 = await b.wake(id);
    assert.equal(b.fake.requests.length, 3, 'the SDK tried three times');
    assert.equal(r1.status, 'rescheduling');
    const t0 = b.deps.clock.now();
    assert.equal(Date.parse(r1.retry_at!) - t0, 2000);
    const errs = errorsOf(b.events(id));
    assert.equal(errs[0]!.error.type, type);
    assert.equal(errs[0]!.error.retry_status.type, 'retrying');
    const early = await b.wake(id);
    assert.equal(early.outcome, 'skipped');
    assert.equal(early.skip_reason, 'rescheduled');
    await b.deps.clock.advance(2000);
    const r2 = await b.wake(id);
    assert.equal(r2.status, 'rescheduling');
    assert.equal(Date.parse(r2.retry_at!) - b.deps.clock.now(), 4000, 'the backoff doubles');
    await b.deps.clock.advance(4000);
    const r3 = await b.wake(id);
    assert.deepEqual(r3.stop_reason, { type: 'end_turn' });
    assert.equal(r3.trigger, 'retry', 'a failed run that backed off is retried, not recovered');
    const last = b.fake.requests[b.fake.requests.length - 1]!.body.messages;
    assert.deepEqual(last, [{ role: 'user', content: [{ type: 'text', text: 'please answer' }] }], 'the message entered once');
    assert.equal(b.store.snapshot(id).consecutive_failures, 0);
  });
}

test('an error in the middle of a stream is not retried by the SDK; it is rescheduled', async (t) => {
  const b = await bench(t, { steps: [{ text: 'partial answer', midStreamError: { type: 'overloaded_error', message: 'Overloaded' } }] });
  const id = b.session('hi');
  const r = await b.wake(id);
  assert.equal(b.fake.requests.length, 1);
  assert.equal(r.status, 'rescheduling');
  const [err] = errorsOf(b.events(id));
  assert.equal(err!.error.code, 'stream_error');
  assert.equal(err!.error.type, 'model_overloaded_error');
  assert.ok(!b.events(id).some((e) => e.type === 'agent.message'), 'a broken reply leaves no half message');
});

test('a missing API key is a clear session.error, nothing is sent, and the session is retried later (the key is the process\'s)', async (t) => {
  const b = await bench(t, { env: { ANTHROPIC_API_KEY: '' } });
  const id = b.session('hi');
  const r = await b.wake(id);
  assert.equal(b.fake.requests.length, 0);
  assert.equal(r.status, 'rescheduling');
  assert.ok(r.retry_at);
  const [err] = errorsOf(b.events(id));
  assert.equal(err!.error.code, 'missing_api_key');
  assert.match(err!.error.message, /set ANTHROPIC_API_KEY/);
});

test('limit: max_model_requests_per_wake ends the run with retries_exhausted', async (t) => {
  const loop = { toolUses: [{ name: 'bash', input: { command: 'true' } }] };
  const b = await bench(t, { steps: [loop, loop, loop], agent: { limits: { max_model_requests_per_wake: 2 } } });
  const id = b.session('loop');
  const r = await b.wake(id);
  assert.equal(b.fake.requests.length, 2);
  assert.deepEqual(r.stop_reason, { type: 'retries_exhausted' });
  const [err] = errorsOf(b.events(id));
  assert.equal(err!.error.type, 'tool_use_limit_reached_error');
  assert.equal(err!.error.retry_status.type, 'exhausted');
});

test('limit: max_output_tokens is the request max_tokens; a reply cut there ends the run', async (t) => {
  const b = await bench(t, { steps: [{ text: 'a very long ans', stopReason: 'max_tokens' }], agent: { limits: { max_output_tokens: 64 } } });
  const id = b.session('write a lot');
  const r = await b.wake(id);
  assert.equal(b.fake.requests[0]!.body.max_tokens, 64);
  assert.deepEqual(r.stop_reason, { type: 'retries_exhausted' });
  assert.equal(errorsOf(b.events(id))[0]!.error.code, 'max_output_tokens');
});

test('limit: session_token_budget stops with budget_reached before the next model request', async (t) => {
  const step = { toolUses: [{ name: 'bash', input: { command: 'true' } }], usage: { input_tokens: 80, output_tokens: 30 } };
  const b = await bench(t, { steps: [step, step], agent: { limits: { session_token_budget: 100 } } });
  const id = b.session('spend');
  const r = await b.wake(id);
  assert.equal(b.fake.requests.length, 1);
  assert.deepEqual(r.stop_reason, { type: 'budget_reached' });
  assert.equal(errorsOf(b.events(id))[0]!.error.code, 'session_token_budget');
  assert.equal(b.store.snapshot(id).usage.input_tokens + b.store.snapshot(id).usage.output_tokens, 110);
});

test('limit: max_wake_seconds aborts the model call in flight (the HTTP request is cancelled)', async (t) => {
  const b = await bench(t, { steps: [{ hang: true }], agent: { limits: { max_wake_seconds: 30 } } });
  const id = b.session('slow');
  const running = b.wake(id);
  await b.fake.waitForRequests(1);
  await b.deps.clock.advance(30_000);
  const r = await running;
  assert.deepEqual(r.stop_reason, { type: 'retries_exhausted' });
  assert.equal(errorsOf(b.events(id))[0]!.error.code, 'wake_time_limit');
  await b.fake.closed(0);
  assert.equal(b.fake.requests[0]!.aborted, true);
});

test('crash reconciliation: a tool use with no result is closed as "outcome unknown" and never run again', async (t) => {
  const b = await bench(t, { steps: [{ text: 'I see the write may not have happened.' }] });
  const id = b.session('write the file');
  const p = b.store.paths(id);
  // what a run killed between the tool call and its result leaves behind
  const taken = b.store.snapshot(id).pending_events.map((e) => e.id);
  b.store.appendEvents(id, [{ type: 'session.status_running', wake_id: DEAD_RUN, trigger: 'event', processed_event_ids: taken }], { wakeId: DEAD_RUN });
  const [start] = b.store.appendEvents(id, [{ type: 'span.model_request_start' }], { wakeId: DEAD_RUN });
  const [use] = b.store.appendEvents(
    id,
    [
      { type: 'agent.tool_use', name: 'write', input: { file_path: 'x.txt', content: 'twice?' }, model_tool_use_id: 'toolu_dead', evaluated_permission: 'allow' },
      { type: 'span.model_request_end', model_request_start_id: start!.id, is_error: false, model_usage: { input_tokens: 1, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 } },
    ],
    { wakeId: DEAD_RUN },
  );
  const r = await b.wake(id);
  assert.equal(r.trigger, 'recovery');
  assert.equal(fs.existsSync(path.join(p.workspace, 'x.txt')), false, 'the write was not executed');
  const result = b.events(id).find((e) => e.type === 'agent.tool_result');
  assert.equal(result?.type === 'agent.tool_result' && result.tool_use_id, use!.id);
  assert.equal(result?.type === 'agent.tool_result' && result.is_error, true);
  assert.match(textOf(result?.type === 'agent.tool_result' ? result.content : []), /^outcome unknown/);
  const sent = b.fake.requests[0]!.body.messages;
  assert.equal(sent.length, 3);
  assert.deepEqual(sent[0], { role: 'user', content: [{ type: 'text', text: 'write the file' }] });
  assert.equal((sent[2]!.content as Array<Record<string, unknown>>)[0]!.tool_use_id, 'toolu_dead');
  const running = b.events(id).filter((e) => e.type === 'session.status_running');
  assert.equal(running.length, 2);
  assert.deepEqual(running[1]?.type === 'session.status_running' && running[1].processed_event_ids, [], 'the message is not taken in twice');
});

test('a run that died before the model answered is continued with the same conversation', async (t) => {
  const b = await bench(t, { steps: [{ text: 'answer' }] });
  const id = b.session('question');
  const taken = b.store.snapshot(id).pending_events.map((e) => e.id);
  b.store.appendEvents(id, [{ type: 'session.status_running', wake_id: DEAD_RUN, trigger: 'event', processed_event_ids: taken }, { type: 'span.model_request_start' }], { wakeId: DEAD_RUN });
  b.store.appendUserEvent(id, { type: 'user.message', content: [{ type: 'text', text: 'and another thing' }] });
  const r = await b.wake(id);
  assert.equal(r.trigger, 'recovery');
  assert.deepEqual(b.fake.requests[0]!.body.messages, [{ role: 'user', content: [{ type: 'text', text: 'question' }, { type: 'text', text: 'and another thing' }] }]);
});

test('the lease: a held lease is busy; a dead holder\'s lease is taken over once stale', async (t) => {
  const b = await bench(t, { steps: [{ text: 'one' }] });
  const id = b.session('hi');
  const { acquireLease } = await import('../../src/core/foundation/lease.js');
  const held = await acquireLease(b.store.paths(id), { purpose: 'test', nowIso: new Date().toISOString() });
  await assert.rejects(b.wake(id), (e: Error & { code?: string }) => e.code === 'busy' && /is busy: its lease is held by pid \d+/.test(e.message));
  await held.release();
  // a holder that died: the lock directory stays, its mtime stops moving
  fs.mkdirSync(b.store.paths(id).lease);
  const old = new Date(Date.now() - 60_000);
  fs.utimesSync(b.store.paths(id).lease, old, old);
  const r = await b.wake(id);
  assert.equal(r.outcome, 'executed');
  assert.equal(fs.existsSync(b.store.paths(id).lease), false, 'released after the run');
});

test('crash reconciliation: a denied call whose refusal was never written is closed as not run, and nothing stays open', async (t) => {
  const b = await bench(t, { steps: [{ text: 'understood' }] });
  const id = b.session('try both');
  const taken = b.store.snapshot(id).pending_events.map((e) => e.id);
  b.store.appendEvents(id, [{ type: 'session.status_running', wake_id: DEAD_RUN, trigger: 'event', processed_event_ids: taken }], { wakeId: DEAD_RUN });
  const [start] = b.store.appendEvents(id, [{ type: 'span.model_request_start' }], { wakeId: DEAD_RUN });
  const [, denied] = b.store.appendEvents(
    id,
    [
      { type: 'agent.tool_use', name: 'write', input: { file_path: 'x.txt', content: 'x' }, model_tool_use_id: 'toolu_ok', evaluated_permission: 'allow' },
      { type: 'agent.tool_use', name: 'nosuchtool', input: {}, model_tool_use_id: 'toolu_no', evaluated_permission: 'deny' },
      { type: 'span.model_request_end', model_request_start_id: start!.id, is_error: false, model_usage: { input_tokens: 1, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 } },
    ],
    { wakeId: DEAD_RUN },
  );
  const r = await b.wake(id);
  assert.equal(r.stop_reason?.type, 'end_turn');
  const result = b.events(id).find((e) => e.type === 'agent.tool_result' && e.tool_use_id === denied!.id);
  assert.equal(result?.type === 'agent.tool_result' && result.is_error, true);
  assert.match(textOf(result?.type === 'agent.tool_result' ? result.content : []), /^not run: this tool call was not allowed/);
  assert.deepEqual(b.store.snapshot(id).open_tool_uses, []);
});
