/**
 * agent.yaml `heartbeat:` (run/heartbeat.ts): a root session of an agent
 * with one keeps one recurring revisit with source `heartbeat`, taken up at
 * its next run, replaced when agent.yaml changes it and cancelled (before it
 * can start a run) when agent.yaml drops it. Children get none; an
 * interrupt leaves it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import YAML from 'yaml';
import { bench, type Bench } from '../helpers/run.js';
import { createSession } from '../../src/core/ops/create-session.js';
import { interruptSession } from '../../src/core/ops/session-ops.js';
import { loadAgent } from '../../src/core/definitions/definitions.js';

/** Rewrites agents/test/agent.yaml with `heartbeat` (or without one). */
function setHeartbeat(b: Bench, heartbeat: Record<string, unknown> | null) {
  const file = b.h.home.agentFile('test');
  const def = YAML.parse(fs.readFileSync(file, 'utf8'));
  if (heartbeat) def.heartbeat = heartbeat;
  else delete def.heartbeat;
  fs.writeFileSync(file, YAML.stringify(def));
}

const heartbeats = (b: Bench, id: string) => b.store.snapshot(id).pending_wakes.filter((w) => w.source === 'heartbeat');
const queue = (b: Bench, id: string) => fs.readFileSync(b.store.paths(id).wakeQueue, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l));

test('a root session takes up its agent\'s heartbeat at its next run; each firing is a run that hears the message, consumed once', async (t) => {
  const b = await bench(t, { steps: [{ text: 'hello' }, { text: 'nothing to do' }, { text: 'still nothing' }] });
  setHeartbeat(b, { every: '30m', message: 'Heartbeat: anything waiting?' });
  const id = b.session('hi');
  await b.wake(id);
  const [hb] = heartbeats(b, id);
  assert.deepEqual([hb?.due_at, hb?.recurrence, hb?.reason], ['2026-11-21T10:30:00.000Z', { every: 1800 }, 'Heartbeat: anything waiting?']);
  assert.equal((await b.wake(id)).skip_reason, 'nothing_pending', 'not before it is due');
  await b.deps.clock.advance(30 * 60_000);
  const r = await b.wake(id);
  assert.deepEqual([r.trigger, r.wakes_consumed], ['wake_queue', [`${hb!.id}@2026-11-21T10:30:00.000Z`]]);
  assert.match(JSON.stringify(b.fake.requests[1]!.body.messages), /Heartbeat: anything waiting\?/);
  assert.equal(heartbeats(b, id)[0]!.due_at, '2026-11-21T11:00:00.000Z');
  // Two hours with no daemon: one run, not four. (Three "nothing to do" answers to the clock are no stale loop: no replan nudge.)
  await b.deps.clock.advance(2 * 3_600_000);
  const late = await b.wake(id);
  assert.equal(late.wakes_consumed.length, 1);
  assert.equal((await b.wake(id)).skip_reason, 'nothing_pending');
  assert.equal(queue(b, id).filter((l) => l.type === 'wake.consumed').length, 2);
  assert.equal(queue(b, id).filter((l) => l.type === 'wake.scheduled').length, 1, 'one schedule, never re-written');
});

test('a heartbeat changed in agent.yaml is replaced; one removed is cancelled before its firing can start a run', async (t) => {
  const b = await bench(t, { steps: [{ text: 'hello' }] });
  setHeartbeat(b, { every: '30m' });
  const id = b.session('hi');
  await b.wake(id);
  const [old] = heartbeats(b, id);
  setHeartbeat(b, { cron: '0 9 * * 1-5', timezone: 'Europe/Berlin' });
  assert.equal((await b.wake(id)).skip_reason, 'nothing_pending', 'an idle session is brought in line without a run');
  const [now] = heartbeats(b, id);
  assert.notEqual(now!.id, old!.id);
  assert.deepEqual([now!.recurrence, now!.due_at], [{ cron: '0 9 * * 1-5', timezone: 'Europe/Berlin' }, '2026-11-23T08:00:00.000Z']);
  assert.deepEqual(queue(b, id).filter((l) => l.type === 'wake.cancelled').map((l) => [l.wake_id, l.reason]), [[old!.id, 'the heartbeat changed in agent.yaml']]);
  await b.deps.clock.advance(3 * 86_400_000); // its firing is due now...
  setHeartbeat(b, null); // ...but agent.yaml no longer has a heartbeat
  const r = await b.wake(id);
  assert.deepEqual([r.outcome, r.skip_reason], ['skipped', 'nothing_pending']);
  assert.equal(b.fake.requests.length, 1, 'no model call for a heartbeat that is gone');
  assert.deepEqual(heartbeats(b, id), []);
  assert.equal(queue(b, id).at(-1).reason, 'the heartbeat was removed from agent.yaml');
});

test('a child session gets no heartbeat, and an interrupt leaves the root\'s heartbeat in place', async (t) => {
  const b = await bench(t, { steps: [{ text: 'hello' }, { text: 'child here' }, { text: 'stopped' }] });
  setHeartbeat(b, { every: 3600 });
  const root = b.session('hi');
  await b.wake(root);
  const child = createSession(b.store, { agent: 'test', parentSessionId: root }).id;
  b.store.appendUserEvent(child, { type: 'user.message', content: [{ type: 'text', text: 'work' }] });
  await b.wake(child);
  assert.deepEqual(heartbeats(b, child), []);
  const [hb] = heartbeats(b, root);
  b.store.scheduleWake(root, { due_at: '2026-11-21T12:00:00.000Z', reason: 'the agent\'s own', source: 'agent', recurrence: { every: 600 } });
  interruptSession(b.store, root);
  await b.wake(root);
  assert.deepEqual(b.store.snapshot(root).pending_wakes.map((w) => w.id), [hb!.id], 'the agent\'s recurring revisit is cancelled, the heartbeat is not');
});

test('agent.yaml refuses a heartbeat it cannot keep, naming the field', (t) => {
  return bench(t).then((b) => {
    for (const [hb, want] of [
      [{ every: '10s' }, /heartbeat\.every: at least 60 seconds/],
      [{ message: 'hi' }, /heartbeat\.every: expected every \(e\.g\. 30m\) or cron/],
      [{ cron: '0 9 * *' }, /heartbeat\.cron: "0 9 \* \*": expected 5 fields/],
      [{ every: '1h', timezone: 'UTC' }, /heartbeat\.timezone: a timezone belongs to a cron expression/],
    ] as const) {
      setHeartbeat(b, hb);
      assert.throws(() => loadAgent(b.h.home, 'test'), want);
    }
  });
});
