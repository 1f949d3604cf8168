/** People in the loop: confirmations, custom tools, interrupts, budgets, loop guards, steering. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { bench, textOf, NO_SHELL } from '../helpers/run.js';
import { validateLog } from '../helpers/event-schema.js';
import { confirmToolUse, answerCustomTool, interruptSession, updateSession, sendMessage } from '../../src/core/ops/session-ops.js';
import type { RecordedRequest } from '../helpers/fake-anthropic.js';

type Blocks = Array<Record<string, unknown>>;
const lastUser = (r: RecordedRequest) => r.body.messages[r.body.messages.length - 1]!.content as Blocks;
const ASK_WRITE = { tools: { write: { permission: 'always_ask' } } };

test('always_ask: the run pauses with requires_action; allow runs the stored input and the same conversation goes on', async (t) => {
  const b = await bench(t, {
    agent: ASK_WRITE,
    steps: [
      { text: 'I will write the file.', toolUses: [{ id: 'toolu_w', name: 'write', input: { file_path: 'plan.md', content: 'the plan' } }] },
      { text: 'Written.' },
    ],
  });
  const id = b.session('write the plan');
  const r1 = await b.wake(id);
  const use = b.events(id).find((e) => e.type === 'agent.tool_use')!;
  assert.equal(use.type === 'agent.tool_use' && use.evaluated_permission, 'ask');
  assert.deepEqual(r1.stop_reason, { type: 'requires_action', event_ids: [use.id] });
  assert.equal(fs.existsSync(path.join(b.store.paths(id).workspace, 'plan.md')), false, 'not run before the answer');
  assert.equal((await b.wake(id)).skip_reason, 'requires_action', 'nothing to do until answered');
  confirmToolUse(b.store, id, use.id, { allow: true });
  const r2 = await b.wake(id);
  assert.deepEqual(r2.stop_reason, { type: 'end_turn' });
  assert.equal(fs.readFileSync(path.join(b.store.paths(id).workspace, 'plan.md'), 'utf8'), 'the plan');
  assert.equal(b.fake.requests.length, 2, 'the model is not asked for the tool again');
  const res = lastUser(b.fake.requests[1]!)[0]!;
  assert.equal(res.tool_use_id, 'toolu_w');
  assert.match(textOf(res.content), /wrote 8 bytes/);
  assert.deepEqual(validateLog(b.store.paths(id).events).errors, []);
});

test('deny with a message: the model gets an error result carrying it, and nothing runs', async (t) => {
  const b = await bench(t, {
    agent: ASK_WRITE,
    steps: [{ toolUses: [{ id: 'toolu_w', name: 'write', input: { file_path: 'x.txt', content: 'x' } }] }, { text: 'Understood, I will not.' }],
  });
  const id = b.session('write x');
  await b.wake(id);
  const use = b.events(id).find((e) => e.type === 'agent.tool_use')!;
  confirmToolUse(b.store, id, use.id, { allow: false, message: 'not in this folder' });
  const r = await b.wake(id);
  assert.deepEqual(r.stop_reason, { type: 'end_turn' });
  assert.equal(fs.existsSync(path.join(b.store.paths(id).workspace, 'x.txt')), false);
  const res = lastUser(b.fake.requests[1]!)[0]!;
  assert.equal(res.is_error, true);
  assert.equal(textOf(res.content), 'the user denied this tool call: not in this folder');
});

test('several asks in one turn: answered one by one; the session stays requires_action listing those still open', async (t) => {
  const b = await bench(t, {
    agent: ASK_WRITE,
    steps: [
      { toolUses: [{ id: 'toolu_a', name: 'write', input: { file_path: 'a.txt', content: 'A' } }, { id: 'toolu_b', name: 'write', input: { file_path: 'b.txt', content: 'B' } }] },
      { text: 'One of two.' },
    ],
  });
  const id = b.session('write both');
  const r1 = await b.wake(id);
  const [a, c] = b.events(id).filter((e) => e.type === 'agent.tool_use');
  assert.deepEqual(r1.stop_reason, { type: 'requires_action', event_ids: [a!.id, c!.id] });
  confirmToolUse(b.store, id, a!.id, { allow: true });
  sendMessage(b.store, id, 'also, hurry'); // waits behind the open ask
  const r2 = await b.wake(id);
  assert.deepEqual(r2.stop_reason, { type: 'requires_action', event_ids: [c!.id] });
  assert.equal(b.fake.requests.length, 1, 'no model call while an ask is still open');
  assert.equal(fs.readFileSync(path.join(b.store.paths(id).workspace, 'a.txt'), 'utf8'), 'A');
  assert.equal(b.store.snapshot(id).pending_events.length, 1, 'the message waits');
  confirmToolUse(b.store, id, c!.id, { allow: false });
  const r3 = await b.wake(id);
  assert.deepEqual(r3.stop_reason, { type: 'end_turn' });
  const sent = lastUser(b.fake.requests[1]!);
  assert.deepEqual(sent.map((x) => x.type === 'tool_result' ? `${x.tool_use_id}:${x.is_error === true}` : textOf([x])), ['toolu_a:false', 'toolu_b:true', 'also, hurry']);
});

test('a custom tool: agent.custom_tool_use pauses the session; user.custom_tool_result resumes it', async (t) => {
  const b = await bench(t, {
    agent: { custom_tools: [{ name: 'lookup_order', description: 'Look up an order', input_schema: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] } }] },
    steps: [{ toolUses: [{ id: 'toolu_c', name: 'lookup_order', input: { id: 'A-17' } }] }, { text: 'Your order shipped.' }],
  });
  const id = b.session('where is A-17?');
  const r1 = await b.wake(id);
  assert.ok(b.fake.requests[0]!.body.tools!.some((x) => x.name === 'lookup_order' && x.description === 'Look up an order'));
  const use = b.events(id).find((e) => e.type === 'agent.custom_tool_use')!;
  assert.deepEqual(use.type === 'agent.custom_tool_use' && use.input, { id: 'A-17' });
  assert.deepEqual(r1.stop_reason, { type: 'requires_action', event_ids: [use.id] });
  answerCustomTool(b.store, id, use.id, 'shipped on Monday', false);
  const r2 = await b.wake(id);
  assert.deepEqual(r2.stop_reason, { type: 'end_turn' });
  assert.deepEqual(lastUser(b.fake.requests[1]!), [{ type: 'tool_result', tool_use_id: 'toolu_c', content: [{ type: 'text', text: 'shipped on Monday' }] }]);
  assert.deepEqual(b.store.snapshot(id).open_tool_uses, []);
  assert.deepEqual(validateLog(b.store.paths(id).events).errors, []);
});

test('a custom tool result with is_error reaches the model as an error', async (t) => {
  const b = await bench(t, {
    agent: { custom_tools: [{ name: 'lookup_order', description: 'Look up an order', input_schema: { type: 'object' } }] },
    steps: [{ toolUses: [{ id: 'toolu_c', name: 'lookup_order', input: {} }] }, { text: 'Sorry.' }],
  });
  const id = b.session('look it up');
  await b.wake(id);
  const use = b.events(id).find((e) => e.type === 'agent.custom_tool_use')!;
  answerCustomTool(b.store, id, use.id, 'the order service is down', true);
  await b.wake(id);
  assert.equal(lastUser(b.fake.requests[1]!)[0]!.is_error, true);
});

test('answers that answer nothing: refused by the CLI-side check, and as a hand-written line reported with a session.error', async (t) => {
  const b = await bench(t, { agent: ASK_WRITE, steps: [{ toolUses: [{ id: 'toolu_w', name: 'write', input: { file_path: 'a', content: 'a' } }] }, { text: 'ok' }] });
  const id = b.session('go');
  await b.wake(id);
  const use = b.events(id).find((e) => e.type === 'agent.tool_use')!;
  assert.throws(() => confirmToolUse(b.store, id, 'sevt_nope', { allow: true }), /has no event sevt_nope/);
  assert.throws(() => confirmToolUse(b.store, id, b.events(id)[0]!.id, { allow: true }), /is a session\.created .*not an agent\.tool_use awaiting confirmation/);
  assert.throws(
    () => answerCustomTool(b.store, id, use.id, 'x', false),
    (e: unknown) => /is a built-in tool use \(write\); answer it with a confirmation$/.test((e as Error).message) && (e as { data?: Record<string, string> }).data?.answer_with === 'confirm',
  );
  confirmToolUse(b.store, id, use.id, { allow: true });
  assert.throws(() => confirmToolUse(b.store, id, use.id, { allow: false }), /was already answered by sevt_/);
  // by hand, the same mistakes
  fs.appendFileSync(b.store.paths(id).events, `${JSON.stringify({ type: 'user.tool_confirmation', tool_use_id: use.id, result: 'deny' })}\n${JSON.stringify({ type: 'user.tool_confirmation', tool_use_id: 'sevt_ghost', result: 'allow' })}\n`);
  const r = await b.wake(id);
  assert.deepEqual(r.stop_reason, { type: 'end_turn' }, 'the first answer stands and the run goes on');
  const errs = b.events(id).filter((e) => e.type === 'session.error');
  assert.equal(errs.length, 2);
  assert.match(errs[0]!.type === 'session.error' ? errs[0]!.error.message : '', /already answered by/);
  assert.equal(errs[0]!.type === 'session.error' && errs[0]!.error.code, 'invalid_answer');
  assert.match(errs[1]!.type === 'session.error' ? errs[1]!.error.message : '', /sevt_ghost is not a tool use awaiting an answer/);
  assert.ok(fs.existsSync(path.join(b.store.paths(id).workspace, 'a')), 'allowed, once');
});

test('an interrupt with nothing running closes open asks as errors, cancels queued revisits, and leaves the session idle (end_turn)', async (t) => {
  const b = await bench(t, { agent: ASK_WRITE, steps: [{ toolUses: [{ id: 'toolu_w', name: 'write', input: { file_path: 'a', content: 'a' } }] }] });
  const id = b.session('go');
  await b.wake(id);
  b.store.scheduleWake(id, { due_at: new Date(b.deps.clock.now() + 60_000).toISOString(), reason: 'later', source: 'agent' });
  interruptSession(b.store, id, 'changed my mind');
  const r = await b.wake(id);
  assert.deepEqual(r.stop_reason, { type: 'end_turn' });
  assert.equal(b.fake.requests.length, 1, 'no model call');
  const res = b.events(id).find((e) => e.type === 'agent.tool_result');
  assert.equal(res?.type === 'agent.tool_result' && res.is_error, true);
  assert.match(JSON.stringify(res), /interrupted by the user/);
  const snap = b.store.snapshot(id);
  assert.deepEqual(snap.open_tool_uses, []);
  assert.deepEqual(snap.pending_wakes, []);
  assert.equal(snap.wakes_cancelled, 1);
  assert.equal(snap.pending_events.length, 0);
});

test('budget: budget_reached; a message does not get past it; a raised budget in the session definition resumes', async (t) => {
  const b = await bench(t, { agent: { limits: { session_token_budget: 100 } }, steps: [{ text: 'first', usage: { input_tokens: 90, output_tokens: 20 } }, { text: 'after the raise' }] });
  const id = b.session('one');
  await b.wake(id);
  sendMessage(b.store, id, 'two');
  const r2 = await b.wake(id);
  assert.deepEqual(r2.stop_reason, { type: 'budget_reached' });
  assert.equal(b.fake.requests.length, 1);
  updateSession(b.store, id, { budget: 1000 });
  sendMessage(b.store, id, 'three');
  const r3 = await b.wake(id);
  assert.deepEqual(r3.stop_reason, { type: 'end_turn' });
  assert.equal(b.fake.requests.length, 2);
  assert.equal(b.store.snapshot(id).overrides.session_token_budget, 1000);
});

test('loop guard: the same call 3 times gets a warning; 5 times ends the run with retries_exhausted', { skip: NO_SHELL }, async (t) => {
  const same = { toolUses: [{ name: 'bash', input: { command: 'echo same' } }] };
  const b = await bench(t, { steps: [same, same, same, same, same, { text: 'never asked' }] });
  const id = b.session('loop');
  const r = await b.wake(id);
  assert.deepEqual(r.stop_reason, { type: 'retries_exhausted' });
  assert.equal(b.fake.requests.length, 5);
  const results = b.events(id).filter((e) => e.type === 'agent.tool_result').map((e) => (e.type === 'agent.tool_result' ? textOf(e.content) : ''));
  assert.equal(results.length, 5);
  assert.doesNotMatch(results[1]!, /openboa:/);
  assert.match(results[2]!, /^same\n\n\[openboa: this is call number 3 of bash with exactly this input/);
  assert.match(results[4]!, /^not run: this is call number 5/);
  const err = b.events(id).find((e) => e.type === 'session.error');
  assert.equal(err?.type === 'session.error' && err.error.code, 'repeated_tool_call');
});

test('loop guard: three empty replies in a row end the run with retries_exhausted', async (t) => {
  const b = await bench(t, { steps: [{ text: '' }, { text: '' }, { text: '' }, { text: 'never' }] });
  const id = b.session('say something');
  const r = await b.wake(id);
  assert.deepEqual(r.stop_reason, { type: 'retries_exhausted' });
  assert.equal(b.fake.requests.length, 3);
  const err = b.events(id).find((e) => e.type === 'session.error');
  assert.equal(err?.type === 'session.error' && err.error.code, 'empty_replies');
});

test('an empty reply followed by a real one is not the end', async (t) => {
  const b = await bench(t, { steps: [{ text: '' }, { text: 'here I am' }] });
  const id = b.session('hello?');
  const r = await b.wake(id);
  assert.deepEqual(r.stop_reason, { type: 'end_turn' });
  assert.equal(b.fake.requests.length, 2);
});

test('a message appended during a run reaches the next model request of the same run', async (t) => {
  const b = await bench(t, {
    steps: [{ toolUses: [{ id: 'toolu_s', name: 'bash', input: { command: 'sleep 0.4; echo slept' } }] }, { text: 'Noted your steer.' }],
  });
  const id = b.session('start');
  const running = b.wake(id);
  await b.fake.waitForRequests(1);
  sendMessage(b.store, id, 'use the blue one');
  const r = await running;
  assert.deepEqual(r.stop_reason, { type: 'end_turn' });
  assert.equal(b.fake.requests.length, 2, 'one run, two requests');
  assert.deepEqual(lastUser(b.fake.requests[1]!).map((x) => x.type), ['tool_result', 'text']);
  assert.equal(textOf([lastUser(b.fake.requests[1]!)[1]]), 'use the blue one');
  const runs = b.events(id).filter((e) => e.type === 'session.status_running');
  assert.equal(runs.length, 2);
  assert.equal(runs[1]?.type === 'session.status_running' && runs[1].continuation, true);
  assert.equal(b.store.snapshot(id).pending_events.length, 0);
});

test('a disabled tool is not offered; a call to it is refused', async (t) => {
  const b = await bench(t, { agent: { tools: { bash: { permission: 'disabled' } } }, steps: [{ toolUses: [{ id: 'toolu_b', name: 'bash', input: { command: 'id' } }] }, { text: 'ok' }] });
  const id = b.session('run id');
  await b.wake(id);
  assert.ok(!b.fake.requests[0]!.body.tools!.some((x) => x.name === 'bash'));
  const res = lastUser(b.fake.requests[1]!)[0]!;
  assert.equal(res.is_error, true);
  assert.match(textOf(res.content), /the tool bash is disabled for this agent/);
  const tools = JSON.parse(fs.readFileSync(path.join(b.store.paths(id).runtime, 'tools.json'), 'utf8'));
  assert.equal(tools.find((x: { name: string }) => x.name === 'bash').offered, false);
});
