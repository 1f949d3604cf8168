import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { bench, NO_SHELL } from '../helpers/run.js';
import { startDaemon } from '../helpers/daemon.js';
import { validateLog } from '../helpers/event-schema.js';
import { whenExists } from '../helpers/home.js';
import { DEAD_RUN } from '../helpers/run-ids.js';
import { KILL_GRACE_MS } from '../../src/core/sandbox/pty-shell.js';

const interrupt = (b: Awaited<ReturnType<typeof bench>>, id: string) =>
  fs.appendFileSync(b.store.paths(id).events, '{"type":"user.interrupt","reason":"stop"}\n');

// The bounds below tell an abort from a finish (the reply streams for ~35 s, the command sleeps 60 s) with room for a
// loaded machine; how fast an interrupt lands is a benchmark figure, not a test's.
test('an interrupt during a slow streaming reply aborts the HTTP request and closes the turn long before the reply would end', async (t) => {
  const b = await bench(t, { steps: [{ text: 'a'.repeat(40), delayMs: 5000 }] });
  const id = b.session('talk slowly');
  b.store.scheduleWake(id, { due_at: new Date(b.deps.clock.now() + 3_600_000).toISOString(), reason: 'later', source: 'agent' });
  const td = await startDaemon(t, b);
  await b.fake.waitForRequests(1);
  const t0 = Date.now();
  interrupt(b, id);
  const r = await td.result((x) => x.session_id === id && x.outcome === 'executed');
  assert.ok(Date.now() - t0 < 10_000, `idle after ${Date.now() - t0} ms`);
  assert.deepEqual(r.stop_reason, { type: 'end_turn' });
  await b.fake.closed(0);
  assert.equal(b.fake.requests[0]!.aborted, true, 'the HTTP request was aborted');
  const ev = b.events(id);
  assert.ok(!ev.some((e) => e.type === 'agent.message'), 'no half reply in the log');
  const cont = ev.filter((e) => e.type === 'session.status_running');
  assert.equal(cont.length, 2);
  assert.equal(cont[1]?.type === 'session.status_running' && cont[1].continuation, true);
  assert.equal(b.store.snapshot(id).pending_events.length, 0, 'the interrupt was taken in');
  const q = fs.readFileSync(b.store.paths(id).wakeQueue, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  assert.deepEqual(q.filter((x) => x.type === 'wake.cancelled').map((x) => x.reason), ['user.interrupt']);
  assert.deepEqual(validateLog(b.store.paths(id).events).errors, []);
});

test('an interrupt during `sleep 60` in bash kills the command at once', { skip: NO_SHELL }, async (t) => {
  const b = await bench(t, { steps: [{ toolUses: [{ id: 'toolu_sleep', name: 'bash', input: { command: 'echo > sleeping; sleep 60' } }] }] });
  const id = b.session('wait a minute');
  const td = await startDaemon(t, b);
  await whenExists(`${b.store.paths(id).workspace}/sleeping`); // the command is running in the sandbox
  const t0 = Date.now();
  const ended = td.result((x) => x.session_id === id && x.outcome === 'executed');
  // The shell's deadlines run on the test's manual clock: once the interrupt's Ctrl-C has armed the kill
  // grace, let it pass, as it would in real time (a Ctrl-C that lands before sleep is in the foreground
  // leaves the kill to do the work).
  void b.deps.clock.armed(KILL_GRACE_MS).then(() => b.deps.clock.advance(KILL_GRACE_MS));
  interrupt(b, id);
  const r = await ended;
  assert.ok(Date.now() - t0 < 10_000, `idle after ${Date.now() - t0} ms`);
  assert.deepEqual(r.stop_reason, { type: 'end_turn' });
  const result = b.events(id).find((e) => e.type === 'agent.tool_result');
  assert.equal(result?.type === 'agent.tool_result' && result.is_error, true);
  assert.match(JSON.stringify(result), /interrupted/);
  assert.equal(b.fake.requests.length, 1, 'no model call after the interrupt');
});

test('stop: an in-flight run is rescheduled (shutdown), its lease released; the next start resumes it', async (t) => {
  const b = await bench(t, { steps: [{ hang: true }, { text: 'resumed answer' }] });
  const id = b.session('long question');
  const td = await startDaemon(t, b);
  await b.fake.waitForRequests(1);
  const t0 = Date.now();
  await td.d.stop();
  assert.ok(Date.now() - t0 < 5000);
  const ev = b.events(id);
  const last = ev[ev.length - 1]!;
  assert.equal(last.type, 'session.status_rescheduled');
  assert.equal(last.type === 'session.status_rescheduled' && last.reason, 'shutdown');
  assert.equal(fs.existsSync(b.store.paths(id).lease), false, 'lease released');
  const again = await startDaemon(t, b);
  const r = await again.result((x) => x.session_id === id && x.outcome === 'executed');
  assert.deepEqual(r.stop_reason, { type: 'end_turn' });
  assert.equal(r.trigger, 'retry', 'a run cut short by a stop was rescheduled; the next start retries it');
  assert.deepEqual(b.fake.requests[1]!.body.messages, [{ role: 'user', content: [{ type: 'text', text: 'long question' }] }]);
});

test('a log that ends in running with no live lease is reconciled and run again with trigger recovery', async (t) => {
  const b = await bench(t, { steps: [{ text: 'recovered' }] });
  const id = b.session('before the crash');
  const taken = b.store.snapshot(id).pending_events.map((e) => e.id);
  b.store.appendEvents(id, [{ type: 'session.status_running', wake_id: DEAD_RUN, trigger: 'event', processed_event_ids: taken }], { wakeId: DEAD_RUN });
  const td = await startDaemon(t, b);
  const r = await td.result((x) => x.session_id === id && x.outcome === 'executed');
  assert.equal(r.trigger, 'recovery');
  assert.equal(b.store.snapshot(id).status, 'idle');
});

test('a session whose runs keep failing backs off 2 s, 4 s, 8 s, each step a status_rescheduled', async (t) => {
  const over = { status: 529, errorType: 'overloaded_error' };
  const b = await bench(t, { steps: Array.from({ length: 9 }, () => over).concat([{ text: 'at last' }] as never) });
  const id = b.session('hello');
  const td = await startDaemon(t, b);
  const retryAts: number[] = [];
  for (let i = 0; i < 3; i++) {
    const r = await td.result((x) => x.session_id === id && x.outcome === 'executed' && td.d.results.filter((y) => y.outcome === 'executed').indexOf(x) === i);
    assert.equal(r.status, 'rescheduling');
    retryAts.push(Date.parse(r.retry_at!) - b.deps.clock.now());
    await b.deps.clock.advance(Date.parse(r.retry_at!) - b.deps.clock.now());
  }
  assert.deepEqual(retryAts, [2000, 4000, 8000]);
  const done = await td.result((x) => x.session_id === id && x.status === 'idle');
  assert.deepEqual(done.stop_reason, { type: 'end_turn' });
  assert.equal(b.events(id).filter((e) => e.type === 'session.status_rescheduled').length, 3);
});
