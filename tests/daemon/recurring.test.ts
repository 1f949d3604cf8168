/**
 * Recurring revisits under the daemon, on a manual clock: each firing is one
 * run and one wake.consumed; firings missed while no daemon ran run once at
 * the next start; a run killed between taking a firing in and its record is
 * recovered without running that firing again.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { bench, type Bench } from '../helpers/run.js';
import { startDaemon } from '../helpers/daemon.js';
import { iso } from '../../src/core/foundation/clock.js';

const MINUTE = 60_000;

const consumed = (b: Bench, id: string): string[] =>
  fs
    .readFileSync(b.store.paths(id).wakeQueue, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l))
    .filter((r) => r.type === 'wake.consumed')
    .map((r) => r.wake_id);

const runsOf = (td: { d: { results: Array<{ session_id: string; outcome: string }> } }, id: string) => td.d.results.filter((r) => r.session_id === id && r.outcome === 'executed');

test('each firing of an every-minute revisit is one run, consumed once; a restart after ten missed minutes runs one, then goes on', async (t) => {
  const b = await bench(t, { steps: Array.from({ length: 8 }, (_, i) => ({ text: `tick ${i}` })) });
  const id = b.session();
  const t0 = b.deps.clock.now() + MINUTE;
  const w = b.store.scheduleWake(id, { due_at: iso(t0), reason: 'tick', source: 'cli', recurrence: { every: 60 } });
  const td = await startDaemon(t, b);
  assert.equal(td.d.results.length, 0, 'not before its first firing');
  await b.deps.clock.advance(MINUTE);
  await td.until(() => runsOf(td, id).length === 1);
  await b.deps.clock.advance(MINUTE);
  await td.until(() => runsOf(td, id).length === 2);
  assert.deepEqual(runsOf(td, id).map((r) => (r as unknown as { wakes_consumed: string[] }).wakes_consumed), [[`${w.id}@${iso(t0)}`], [`${w.id}@${iso(t0 + MINUTE)}`]]);
  await td.d.stop();

  await b.deps.clock.advance(10 * MINUTE + 30_000); // ten firings pass with no daemon
  const td2 = await startDaemon(t, b);
  await td2.until(() => runsOf(td2, id).length === 1);
  const caughtUp = runsOf(td2, id)[0] as unknown as { trigger: string; wakes_consumed: string[] };
  assert.deepEqual([caughtUp.trigger, caughtUp.wakes_consumed], ['wake_queue', [`${w.id}@${iso(t0 + 2 * MINUTE)}`]], 'the first missed firing runs, once');
  const next = t0 + 12 * MINUTE;
  assert.equal(b.store.snapshot(id).next_wake_at, iso(next), 'then the next firing after now, on the grid');
  await b.deps.clock.advance(next - b.deps.clock.now() - 1);
  assert.equal(runsOf(td2, id).length, 1, 'nothing before it');
  await b.deps.clock.advance(1);
  await td2.until(() => runsOf(td2, id).length === 2);
  const all = consumed(b, id);
  assert.deepEqual(all, [...new Set(all)], 'no firing consumed twice');
  assert.equal(all.length, 4);
  assert.equal(b.fake.requests.length, 4, 'one model call per firing');
});

test('a run killed between taking a firing in and its wake.consumed is recovered at start; the firing does not run again', async (t) => {
  const b = await bench(t, { steps: [{ text: 'recovered' }, { text: 'next firing' }] });
  const id = b.session();
  const t0 = b.deps.clock.now() + MINUTE;
  const w = b.store.scheduleWake(id, { due_at: iso(t0), reason: 'each minute', source: 'agent', recurrence: { every: 60 } });
  await b.deps.clock.advance(MINUTE);
  // A run took the firing in, then the process was killed (no wake.consumed, no ending).
  const firing = `${w.id}@${iso(t0)}`;
  const runId = b.store.deps.ids.run();
  b.store.appendEvents(id, [{ type: 'session.status_running', wake_id: runId, trigger: 'wake_queue', processed_event_ids: [], wakes: [{ id: firing, reason: w.reason, due_at: w.due_at }] }], { wakeId: runId });
  await b.deps.clock.advance(5 * MINUTE + 10_000);
  const td = await startDaemon(t, b);
  await td.until(() => runsOf(td, id).length === 1);
  const r = runsOf(td, id)[0] as unknown as { trigger: string; wakes_consumed: string[] };
  assert.deepEqual([r.trigger, r.wakes_consumed], ['recovery', []], 'the recovery takes no firing in');
  assert.deepEqual(consumed(b, id), [firing], "the killed run's firing, consumed once, by the recovery");
  const snap = b.store.snapshot(id);
  assert.deepEqual([snap.wakes_taken, snap.next_wake_at], [[], iso(t0 + 6 * MINUTE)], 'the firings missed meanwhile collapsed into the recovered one');
  await b.deps.clock.advance(2 * MINUTE);
  await td.until(() => runsOf(td, id).length === 2);
  assert.deepEqual((runsOf(td, id)[1] as unknown as { wakes_consumed: string[] }).wakes_consumed, [`${w.id}@${iso(t0 + 6 * MINUTE)}`]);
  assert.deepEqual(consumed(b, id), [firing, `${w.id}@${iso(t0 + 6 * MINUTE)}`]);
});
