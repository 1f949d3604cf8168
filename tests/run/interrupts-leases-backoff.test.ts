/** Interrupts that must not spin or be undone, late answers, backoff timing, aborts while the lease is taken, and leases of other PID namespaces. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { bench, textOf, toolResults, NO_SHELL } from '../helpers/run.js';
import { startDaemon } from '../helpers/daemon.js';
import { confirmToolUse, interruptSession, sendMessage } from '../../src/core/ops/session-ops.js';
import { nextDueMs } from '../../src/core/run/plan.js';
import { acquireLease } from '../../src/core/foundation/lease.js';
import { whenExists } from '../helpers/home.js';
import { FIRST_RUN } from '../helpers/run-ids.js';

test('a second confirmation that arrives while the first tool runs is taken into the same run: both results are real', { skip: NO_SHELL }, async (t) => {
  const b = await bench(t, {
    agent: { tools: { bash: { permission: 'always_ask' } } },
    steps: [
      { toolUses: [{ id: 'toolu_a', name: 'bash', input: { command: 'echo > started-a; sleep 0.4; echo A > a.txt; echo done-a' } }, { id: 'toolu_b', name: 'bash', input: { command: 'echo B > b.txt; echo done-b' } }] },
      { text: 'Both done.' },
    ],
  });
  const id = b.session('two commands');
  await b.wake(id);
  const [a, c] = b.events(id).filter((e) => e.type === 'agent.tool_use');
  confirmToolUse(b.store, id, a!.id, { allow: true });
  const running = b.wake(id);
  await whenExists(path.join(b.store.paths(id).workspace, 'started-a')); // A is running now
  confirmToolUse(b.store, id, c!.id, { allow: true });
  const r = await running;
  assert.deepEqual(r.stop_reason, { type: 'end_turn' });
  const res = toolResults(b.fake.requests[1]!);
  assert.deepEqual([res.get('toolu_a')!.text, res.get('toolu_b')!.text], ['done-a', 'done-b']);
  assert.ok(fs.existsSync(path.join(b.store.paths(id).workspace, 'b.txt')));
  assert.equal(b.fake.requests.length, 2);
  assert.equal(b.events(id).filter((e) => e.type === 'agent.tool_result').length, 2);
});

test('an interrupt with a broken agent.yaml is honoured at once instead of spinning', async (t) => {
  const b = await bench(t, { agent: { tools: { write: { permission: 'always_ask' } } }, steps: [{ toolUses: [{ id: 'toolu_w', name: 'write', input: { file_path: 'a', content: 'a' } }] }] });
  const id = b.session('go');
  await b.wake(id);
  b.h.write('agents/test/agent.yaml', 'provider: [broken\n');
  interruptSession(b.store, id);
  const td = await startDaemon(t, b);
  await td.until(() => b.store.snapshot(id, { persist: false }).pending_events.length === 0 && td.d.activeRuns === 0);
  await new Promise((r) => setTimeout(r, 300));
  assert.ok(td.d.results.filter((x) => x.session_id === id).length <= 2, `ran ${td.d.results.length} times`);
  const snap = b.store.snapshot(id);
  assert.equal(snap.status, 'idle');
  assert.deepEqual(snap.stop_reason, { type: 'end_turn' });
  assert.deepEqual(snap.open_tool_uses, []);
  const err = b.events(id).find((e) => e.type === 'session.error');
  assert.equal(err?.type === 'session.error' && err.error.code, 'invalid_definition');
});

test('while a failed run backs off, a due revisit waits for the retry (no timer storm)', async (t) => {
  const b = await bench(t, { steps: [{ status: 400 }] });
  const id = b.session();
  b.store.appendEvents(
    id,
    [
      { type: 'session.status_running', wake_id: FIRST_RUN, trigger: 'event', processed_event_ids: [] },
      { type: 'session.status_rescheduled', reason: 'test', retry_at: new Date(b.deps.clock.now() + 60_000).toISOString() },
    ],
    { wakeId: FIRST_RUN },
  );
  b.store.scheduleWake(id, { due_at: new Date(b.deps.clock.now() - 1000).toISOString(), reason: 'overdue', source: 'agent' });
  assert.equal(nextDueMs(b.store.snapshot(id)), b.deps.clock.now() + 60_000);
});

test('a run stopped while it was taking the lease does not start, and leaves nothing behind', async (t) => {
  const b = await bench(t, { steps: [{ text: 'never' }] });
  const id = b.session('hi');
  const ac = new AbortController();
  ac.abort({ kind: 'shutdown' });
  const before = fs.readFileSync(b.store.paths(id).events, 'utf8');
  const r = await b.wake(id, { signal: ac.signal });
  assert.equal(r.outcome, 'skipped');
  assert.equal(r.skip_reason, 'aborted');
  assert.equal(fs.readFileSync(b.store.paths(id).events, 'utf8'), before);
  assert.equal(fs.existsSync(b.store.paths(id).lease), false);
  assert.equal(b.fake.requests.length, 0);
});

test('a lease recorded in another PID namespace is not broken early, even if its pid is not alive here', async (t) => {
  const b = await bench(t, { steps: [{ text: 'x' }] });
  const id = b.session('hi');
  const p = b.store.paths(id);
  const held = await acquireLease(p, { purpose: 'test', nowIso: new Date().toISOString() });
  const owner = JSON.parse(fs.readFileSync(p.leaseOwner, 'utf8'));
  fs.writeFileSync(p.leaseOwner, JSON.stringify({ ...owner, pid: 2 ** 22 + 12345, pid_ns: 'pid:[1]' }));
  await assert.rejects(b.wake(id), (e: Error & { code?: string }) => e.code === 'busy');
  fs.writeFileSync(p.leaseOwner, JSON.stringify({ ...owner, pid: 2 ** 22 + 12345 }));
  const r = await b.wake(id); // same namespace, same boot, dead pid: broken at once
  assert.equal(r.outcome, 'executed');
  await held.release();
});

test('the repeated-call guard does not leave an ask of the same reply open', { skip: NO_SHELL }, async (t) => {
  const same = { toolUses: [{ name: 'bash', input: { command: 'echo same' } }] };
  const last = { toolUses: [{ name: 'bash', input: { command: 'echo same' } }, { id: 'toolu_ask', name: 'write', input: { file_path: 'a', content: 'a' } }] };
  const b = await bench(t, { agent: { tools: { write: { permission: 'always_ask' } } }, steps: [same, same, same, same, last, { text: 'next turn' }] });
  const id = b.session('loop');
  const r = await b.wake(id);
  assert.deepEqual(r.stop_reason, { type: 'retries_exhausted' });
  assert.deepEqual(b.store.snapshot(id).open_tool_uses, []);
  sendMessage(b.store, id, 'try again');
  const r2 = await b.wake(id);
  assert.deepEqual(r2.stop_reason, { type: 'end_turn' }, 'the next message gets through');
});

test('a run that died while honouring an interrupt is finished, not continued, by recovery', async (t) => {
  const b = await bench(t, { steps: [{ text: 'should not be asked' }] });
  const id = b.session('long task');
  const taken = b.store.snapshot(id).pending_events.map((e) => e.id);
  b.store.appendEvents(id, [{ type: 'session.status_running', wake_id: FIRST_RUN, trigger: 'event', processed_event_ids: taken }], { wakeId: FIRST_RUN });
  interruptSession(b.store, id, 'stop');
  const intr = b.store.snapshot(id).pending_events.map((e) => e.id);
  // the run took the interrupt in, then died before its status_idle
  b.store.appendEvents(id, [{ type: 'session.status_running', wake_id: FIRST_RUN, trigger: 'event', processed_event_ids: intr, continuation: true }], { wakeId: FIRST_RUN });
  const r = await b.wake(id);
  assert.equal(r.trigger, 'recovery');
  assert.deepEqual(r.stop_reason, { type: 'end_turn' });
  assert.equal(b.fake.requests.length, 0, 'the interrupted turn is not carried on');
  assert.equal(textOf([]), '');
});
