/**
 * Recurring revisits in the wake queue (wake-queue-fold.ts, recurrence.ts):
 * each firing is taken and consumed once, firings missed while nothing ran
 * collapse into one, a cancel stops the schedule, and the next firing
 * follows from the log alone (a fold from scratch gives the same).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { SessionStore } from '../../src/core/store/session-store.js';
import { createSession } from '../../src/core/ops/create-session.js';
import { viewWakes } from '../../src/core/views/wake-view.js';
import { planRun } from '../../src/core/run/plan.js';
import { takenId } from '../../src/core/store/wake-queue-fold.js';
import { iso } from '../../src/core/foundation/clock.js';
import type { SessionSnapshot } from '../../src/core/schema/index.js';
import { tempHome } from '../helpers/home.js';
import { testDeps } from '../helpers/deps.js';

const HOUR = 3_600_000;

function setup(t: Parameters<typeof tempHome>[0]) {
  const h = tempHome(t);
  const deps = testDeps();
  const store = new SessionStore(h.home, deps);
  const id = createSession(store, { agent: 'demo' }).id;
  return { deps, store, id, p: store.paths(id) };
}

/** What wake() does with the revisits due now: lists their firings in its session.status_running, then (unless `crash`) consumes them. */
function run(store: SessionStore, id: string, o: { crash?: boolean } = {}): string[] {
  const plan = planRun(store.snapshot(id), store.deps.clock.now(), {});
  const runId = store.deps.ids.run();
  const ids = plan.wakes.map(takenId);
  store.appendEvents(id, [{ type: 'session.status_running', wake_id: runId, trigger: 'wake_queue', processed_event_ids: [], wakes: plan.wakes.map((w) => ({ id: takenId(w), reason: w.reason, due_at: w.due_at })) }], { wakeId: runId });
  if (o.crash) return ids;
  store.settleWakes(id, 'wake.consumed', [...ids, ...store.snapshot(id).wakes_taken.filter((x) => !ids.includes(x))], { wakeRunId: runId });
  store.appendEvents(id, [{ type: 'session.status_idle', wake_id: runId, stop_reason: { type: 'end_turn' }, stop_details: null }], { wakeId: runId });
  return ids;
}

/** The queue's part of a snapshot, folded afresh from the journals (session.json deleted). */
function fromScratch(store: SessionStore, id: string): Pick<SessionSnapshot, 'pending_wakes' | 'wakes_taken' | 'wakes_consumed' | 'wakes_cancelled'> {
  fs.rmSync(store.paths(id).snapshot, { force: true });
  const s = new SessionStore(store.home, store.deps).snapshot(id);
  return { pending_wakes: s.pending_wakes, wakes_taken: s.wakes_taken, wakes_consumed: s.wakes_consumed, wakes_cancelled: s.wakes_cancelled };
}

const queueOf = (s: SessionSnapshot) => ({ pending_wakes: s.pending_wakes, wakes_taken: s.wakes_taken, wakes_consumed: s.wakes_consumed, wakes_cancelled: s.wakes_cancelled });

test('every firing of an hourly revisit is taken in once and consumed once; it stays pending at its next firing', async (t) => {
  const { deps, store, id } = setup(t);
  const t0 = deps.clock.now() + HOUR;
  const w = store.scheduleWake(id, { due_at: iso(t0), reason: 'check the build', source: 'cli', recurrence: { every: 3600 } });
  assert.equal(planRun(store.snapshot(id), deps.clock.now(), {}).runnable, false, 'not due before its first firing');
  await deps.clock.advance(HOUR);
  assert.deepEqual(run(store, id), [`${w.id}@${iso(t0)}`]);
  assert.equal(planRun(store.snapshot(id), deps.clock.now(), {}).runnable, false, 'the firing is spent');
  await deps.clock.advance(HOUR);
  assert.deepEqual(run(store, id), [`${w.id}@${iso(t0 + HOUR)}`]);
  const snap = store.snapshot(id);
  assert.deepEqual(snap.pending_wakes.map((x) => [x.id, x.due_at, x.recurrence]), [[w.id, iso(t0 + 2 * HOUR), { every: 3600 }]]);
  assert.deepEqual([snap.wakes_consumed, snap.wakes_taken], [2, []]);
  assert.equal(snap.next_wake_at, iso(t0 + 2 * HOUR));
  const q = fs.readFileSync(store.paths(id).wakeQueue, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  assert.equal(q.filter((r) => r.type === 'wake.consumed').length, 2, 'one record per firing');
  assert.deepEqual(fromScratch(store, id), queueOf(snap), 'the next firing follows from the log alone');
});

test('firings missed while nothing ran collapse into one run; the schedule goes on from the present, on its grid', async (t) => {
  const { deps, store, id } = setup(t);
  const t0 = deps.clock.now() + HOUR;
  const w = store.scheduleWake(id, { due_at: iso(t0), reason: 'hourly', source: 'cli', recurrence: { every: 3600 } });
  await deps.clock.advance(HOUR * 5 + 30 * 60_000); // five firings (t0 .. t0 + 4h) passed with no daemon
  const plan = planRun(store.snapshot(id), deps.clock.now(), {});
  assert.deepEqual(plan.wakes.map(takenId), [`${w.id}@${iso(t0)}`], 'one firing runs, not five');
  run(store, id);
  const snap = store.snapshot(id);
  assert.equal(snap.pending_wakes[0]!.due_at, iso(t0 + 5 * HOUR), 'the next firing after now, aligned to the first');
  assert.equal(snap.wakes_consumed, 1);
  assert.equal(planRun(snap, deps.clock.now(), {}).runnable, false, 'nothing more is due now');
  assert.deepEqual(fromScratch(store, id), queueOf(snap));
});

test('a run that dies after taking a firing in never runs it again; its recovery writes the record, and the schedule goes on from there', async (t) => {
  const { deps, store, id } = setup(t);
  const t0 = deps.clock.now() + 60_000;
  const w = store.scheduleWake(id, { due_at: iso(t0), reason: 'each minute', source: 'cli', recurrence: { every: 60 } });
  await deps.clock.advance(60_000);
  const [firing] = run(store, id, { crash: true });
  await deps.clock.advance(3 * 60_000); // the daemon was down for three more firings
  let snap = store.snapshot(id);
  assert.deepEqual(snap.wakes_taken, [firing]);
  assert.deepEqual([snap.pending_wakes.length, snap.next_wake_at], [1, null], 'its firing taken, the schedule waits for the record');
  const plan = planRun(snap, deps.clock.now(), {});
  assert.deepEqual([plan.recovery, plan.wakes], [true, []], 'the recovery takes no firing again');
  const v = viewWakes(store.readWakes(id), deps.clock.now(), snap).wakes;
  assert.deepEqual(v.map((x) => [x.id, x.firings, x.last_firing]), [[w.id, 1, { due_at: iso(t0), as: 'consumed', at: null, wake_run_id: null }]]);
  assert.deepEqual(run(store, id), []);
  snap = store.snapshot(id);
  assert.deepEqual([snap.wakes_taken, snap.wakes_consumed], [[], 1], 'the dead run\'s firing got its record from the recovery');
  assert.equal(snap.pending_wakes[0]!.due_at, iso(t0 + 4 * 60_000), 'the firings missed meanwhile collapsed into the recovered one');
  assert.deepEqual(fromScratch(store, id), queueOf(snap));
});

test('cancelling a recurring revisit stops every firing to come; a consumed record of the schedule itself changes nothing', async (t) => {
  const { deps, store, id } = setup(t);
  const w = store.scheduleWake(id, { due_at: iso(deps.clock.now() + 60_000), reason: 'poll', source: 'agent', recurrence: { every: 60 } });
  store.settleWakes(id, 'wake.consumed', [w.id], { wakeRunId: 'wrun_x' });
  assert.equal(store.snapshot(id).pending_wakes.length, 1, 'a schedule is not consumed, its firings are');
  store.settleWakes(id, 'wake.cancelled', [w.id], { reason: 'no longer needed' });
  await deps.clock.advance(10 * 60_000);
  const snap = store.snapshot(id);
  assert.deepEqual([snap.pending_wakes, snap.next_wake_at, snap.wakes_cancelled], [[], null, 1]);
  assert.equal(planRun(snap, deps.clock.now(), {}).runnable, false);
  assert.deepEqual(viewWakes(store.readWakes(id), deps.clock.now(), snap).wakes.map((x) => [x.id, x.state, x.cancel_reason]), [[w.id, 'cancelled', 'no longer needed']]);
  assert.deepEqual(fromScratch(store, id), queueOf(snap));
});

test('a firing cancelled by its own id is skipped: the schedule moves on, counted as cancelled', async (t) => {
  const { deps, store, id } = setup(t);
  const t0 = deps.clock.now() + HOUR;
  const w = store.scheduleWake(id, { due_at: iso(t0), reason: 'hourly', source: 'cli', recurrence: { every: 3600 } });
  store.settleWakes(id, 'wake.cancelled', [`${w.id}@${iso(t0)}`], { reason: 'skip this one' });
  let snap = store.snapshot(id);
  assert.deepEqual([snap.pending_wakes[0]!.due_at, snap.wakes_cancelled], [iso(t0 + HOUR), 1]);
  // A record of an earlier firing than the schedule's next (a late duplicate) moves nothing.
  store.settleWakes(id, 'wake.cancelled', [`${w.id}@${iso(t0)}`], { reason: 'again' });
  snap = store.snapshot(id);
  assert.deepEqual([snap.pending_wakes[0]!.due_at, snap.wakes_cancelled], [iso(t0 + HOUR), 1]);
});

test('a cron revisit fires on its expression in its time zone, across a change of daylight saving time', async (t) => {
  const { deps, store, id, p } = setup(t);
  // 2026-11-21 is a Saturday; 09:00 in Berlin is 08:00Z in winter.
  fs.appendFileSync(p.wakeQueue, `${JSON.stringify({ type: 'wake.scheduled', id: 'wake_weekdays', due_at: iso(deps.clock.now()), reason: 'standup', source: 'hand', cron: '0 9 * * 1-5', timezone: 'Europe/Berlin' })}\n`);
  let snap = store.snapshot(id);
  assert.deepEqual(snap.pending_wakes.map((w) => [w.id, w.due_at, w.recurrence]), [['wake_weekdays', '2026-11-23T08:00:00.000Z', { cron: '0 9 * * 1-5', timezone: 'Europe/Berlin' }]]);
  await deps.clock.advance(Date.parse('2026-11-23T08:00:00.000Z') - deps.clock.now());
  run(store, id);
  assert.equal(store.snapshot(id).pending_wakes[0]!.due_at, '2026-11-24T08:00:00.000Z');
  // On 28 March 2027 the clocks go forward: 09:00 in Berlin is 08:00Z the day before, 07:00Z that day.
  fs.appendFileSync(p.wakeQueue, `${JSON.stringify({ type: 'wake.scheduled', id: 'wake_spring', due_at: '2027-03-26T12:00:00.000Z', reason: 'spring', source: 'hand', cron: '0 9 * * *', timezone: 'Europe/Berlin' })}\n`);
  snap = store.snapshot(id);
  const spring = snap.pending_wakes.find((w) => w.id === 'wake_spring')!;
  assert.equal(spring.due_at, '2027-03-27T08:00:00.000Z');
  store.settleWakes(id, 'wake.cancelled', [`wake_spring@${spring.due_at}`], { reason: 'skip' });
  assert.equal(store.snapshot(id).pending_wakes.find((w) => w.id === 'wake_spring')!.due_at, '2027-03-28T07:00:00.000Z');
});

test('a cron revisit run in the hour a clock goes back (west of UTC) falls due after the run, never before it: no run after run', async (t) => {
  const { deps, store, id, p } = setup(t);
  // 7 November 2027, New York: 01:00-01:59 happens twice, at 05:00Z (EDT) and again at 06:00Z (EST).
  fs.appendFileSync(p.wakeQueue, `${JSON.stringify({ type: 'wake.scheduled', id: 'wake_five', due_at: '2027-11-07T05:50:00.000Z', reason: 'poll', source: 'hand', cron: '*/5 * * * *', timezone: 'America/New_York' })}\n`);
  await deps.clock.advance(Date.parse('2027-11-07T06:02:00.000Z') - deps.clock.now()); // 01:02 EST, the second 01:02
  assert.deepEqual(run(store, id), ['wake_five@2027-11-07T05:50:00.000Z']);
  for (let i = 0; i < 3; i++) {
    const due = store.snapshot(id).pending_wakes[0]!.due_at;
    assert.ok(Date.parse(due) > deps.clock.now(), `the next firing (${due}) is after the run that settled the last one`);
    assert.equal(planRun(store.snapshot(id), deps.clock.now(), {}).runnable, false, 'nothing is due right after a run');
    await deps.clock.advance(Date.parse(due) - deps.clock.now());
    assert.deepEqual(run(store, id), [`wake_five@${due}`]);
  }
  assert.deepEqual(fromScratch(store, id), queueOf(store.snapshot(id)));
});

test('recurring lines that break the bounds are refused, each naming its field', (t) => {
  const { store, id, p } = setup(t);
  const lines = [
    { due_at: '2026-11-21T10:00:00Z', reason: 'r', every: 30 },
    { due_at: '2026-11-21T10:00:00Z', reason: 'r', cron: '* * * * * *' },
    { due_at: '2026-11-21T10:00:00Z', reason: 'r', cron: '0 9 * * *', timezone: 'Mars/Olympus' },
    { delay_seconds: 60, reason: 'r', every: 3600 },
    { due_at: '2026-11-21T10:00:00Z', reason: 'r', every: 60, cron: '0 9 * * *' },
    { type: 'wake.scheduled', id: 'wake_a@b', due_at: '2026-11-21T10:00:00Z', reason: 'r' },
    // Never fires, and croner's search for a firing overflows the stack rather than say so.
    { due_at: '2026-11-21T10:00:00Z', reason: 'r', cron: '0 0 31 2,4,6,9,11 *' },
  ];
  fs.appendFileSync(p.wakeQueue, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
  const snap = store.snapshot(id);
  assert.deepEqual(snap.pending_wakes, []);
  const msgs = snap.rejected.map((r) => r.message);
  assert.equal(msgs.length, lines.length);
  assert.match(msgs[0]!, /every: at least 60 seconds/);
  assert.match(msgs[1]!, /cron: .*expected 5 fields/);
  assert.match(msgs[2]!, /timezone: "Mars\/Olympus" is not a time zone/);
  assert.match(msgs[3]!, /delay_seconds: a recurring revisit .* needs due_at/);
  assert.match(msgs[4]!, /cron: expected either every or cron, not both/);
  assert.match(msgs[5]!, /id: expected an id without "@"/);
  assert.match(msgs[6]!, /cron: "0 0 31 2,4,6,9,11 \*" never fires/);
});

/** A small seeded generator, so a failure names the seed that reproduces it. */
function rng(seed: number) {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
}

test('snapshot, view and a fold from scratch agree on recurring revisits over random histories of runs, crashes, skips and cancels', async (t) => {
  for (let seed = 1; seed <= 10; seed++) {
    const { deps, store, id } = setup(t);
    const r = rng(seed);
    const where = `seed ${seed}`;
    for (let step = 0; step < 40; step++) {
      const snap = store.snapshot(id, { persist: r() < 0.7 });
      const x = r();
      const recurring = snap.pending_wakes.filter((w) => w.recurrence);
      if (x < 0.15) {
        store.scheduleWake(id, { due_at: iso(deps.clock.now() + Math.floor(r() * 300_000)), reason: `s${step}`, source: 'agent', recurrence: { every: 60 * (1 + Math.floor(r() * 5)) } });
      } else if (x < 0.4) {
        run(store, id, { crash: r() < 0.3 });
      } else if (x < 0.48 && recurring.length) {
        const w = recurring[Math.floor(r() * recurring.length)]!;
        store.settleWakes(id, 'wake.cancelled', [r() < 0.5 ? w.id : takenId(w)], { reason: 'test' });
      } else if (x < 0.52) {
        const w = snap.wakes_taken[0];
        if (w) store.settleWakes(id, 'wake.consumed', [w], { wakeRunId: 'wrun_by_hand' });
      } else {
        await deps.clock.advance(Math.floor(r() * 400_000));
      }
      const now = store.snapshot(id);
      for (const w of now.pending_wakes) assert.ok(!now.wakes_taken.includes(takenId(w)) || now.next_wake_at !== w.due_at, `${where}: a taken firing is not the next`);
    }
    const snap = store.snapshot(id);
    const v = viewWakes(store.readWakes(id), deps.clock.now(), snap);
    const open = (xs: Array<{ id: string; due_at: string }>) => xs.map((w) => `${w.id} ${w.due_at}`).sort();
    assert.deepEqual(open(v.wakes.filter((w) => w.state === 'pending' || w.state === 'due')), open(snap.pending_wakes), `${where}: pending, at their next firings`);
    assert.deepEqual(fromScratch(store, id), queueOf(snap), `${where}: a fold from scratch`);
  }
});
