/**
 * The wake queue is folded once (wake-queue-fold.ts): the session's snapshot
 * and the view for people (`openboa wakes`) give the same answer, whatever
 * order runs, crashes, pins and settling records came in.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { SessionStore } from '../../src/core/store/session-store.js';
import { createSession } from '../../src/core/ops/create-session.js';
import { viewWakes } from '../../src/core/views/wake-view.js';
import { iso } from '../../src/core/foundation/clock.js';
import { tempHome } from '../helpers/home.js';
import { testDeps } from '../helpers/deps.js';

function setup(t: Parameters<typeof tempHome>[0]) {
  const h = tempHome(t);
  const deps = testDeps();
  const store = new SessionStore(h.home, deps);
  const id = createSession(store, { agent: 'demo' }).id;
  return { deps, store, id, p: store.paths(id) };
}

/** A run opens and lists the revisits it takes in, as wake() does before it writes their wake.consumed records. */
function take(store: SessionStore, id: string, wakeIds: string[]): string {
  const runId = store.deps.ids.run();
  const due = store.snapshot(id).pending_wakes.filter((w) => wakeIds.includes(w.id));
  store.appendEvents(id, [{ type: 'session.status_running', wake_id: runId, trigger: 'wake_queue', processed_event_ids: [], wakes: due.map((w) => ({ id: w.id, reason: w.reason, due_at: w.due_at })) }], { wakeId: runId });
  return runId;
}

const view = (store: SessionStore, id: string, now: number) => viewWakes(store.readWakes(id), now, store.snapshot(id)).wakes;

test('a pin written late, after the revisit ran, does not bring it back', async (t) => {
  const { deps, store, id, p } = setup(t);
  fs.appendFileSync(p.wakeQueue, '{"delay_seconds":10,"reason":"by hand"}\n');
  const stale = store.snapshot(id).pending_wakes[0]!; // a reader that will pin later
  assert.equal(stale.provisional, true);
  await deps.clock.advance(20_000);
  store.snapshot(id, { pin: true }); // the run pins, takes it in and consumes it
  const runId = take(store, id, ['wake_line_1']);
  store.settleWakes(id, 'wake.consumed', ['wake_line_1'], { wakeRunId: runId });
  // the stale reader's pin arrives now
  fs.appendFileSync(p.wakeQueue, `${JSON.stringify({ type: 'wake.scheduled', id: 'wake_line_1', due_at: stale.due_at, reason: stale.reason, source: 'hand', created_at: iso(deps.clock.now()) })}\n`);
  const snap = store.snapshot(id);
  assert.deepEqual(snap.pending_wakes, [], 'not pending again: it would run twice');
  assert.equal(snap.wakes_consumed, 1);
  assert.deepEqual(view(store, id, deps.clock.now()).map((w) => [w.id, w.state, w.wake_run_id]), [['wake_line_1', 'consumed', runId]]);
});

test('a revisit cancelled after a run took it in is cancelled in the snapshot and in the view', (t) => {
  const { deps, store, id } = setup(t);
  const w = store.scheduleWake(id, { due_at: iso(deps.clock.now()), reason: 'now', source: 'agent' });
  take(store, id, [w.id]);
  assert.deepEqual(view(store, id, deps.clock.now()).map((x) => [x.id, x.state, x.wake_run_id]), [[w.id, 'consumed', null]], 'taken in; its record not written yet');
  store.settleWakes(id, 'wake.cancelled', [w.id], { reason: 'by hand' });
  const snap = store.snapshot(id);
  assert.deepEqual([snap.wakes_consumed, snap.wakes_cancelled, snap.wakes_taken], [0, 1, []]);
  assert.deepEqual(view(store, id, deps.clock.now()).map((x) => [x.id, x.state, x.cancel_reason]), [[w.id, 'cancelled', 'by hand']]);
});

test('lines appended after the snapshot are left to the next look, not half-shown', (t) => {
  const { deps, store, id, p } = setup(t);
  const snap = store.snapshot(id);
  store.scheduleWake(id, { due_at: iso(deps.clock.now() + 60_000), reason: 'later', source: 'agent' });
  fs.appendFileSync(p.wakeQueue, 'not json\n');
  const r = viewWakes(store.readWakes(id), deps.clock.now(), snap);
  assert.deepEqual([r.wakes, r.invalid], [[], []]);
  assert.equal(viewWakes(store.readWakes(id), deps.clock.now(), store.snapshot(id)).wakes.length, 1);
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

test('snapshot, view and a fold from scratch agree over random histories of revisits, runs and crashes', async (t) => {
  for (let seed = 1; seed <= 12; seed++) {
    const { deps, store, id, p } = setup(t);
    const r = rng(seed);
    const pick = <T>(xs: readonly T[]): T | undefined => xs[Math.floor(r() * xs.length)];
    let lines = fs.readFileSync(p.wakeQueue, 'utf8').split('\n').length - 1;
    const handLines: number[] = [];
    const append = (text: string) => {
      fs.appendFileSync(p.wakeQueue, `${text}\n`);
      lines += 1;
    };
    const settle = (type: 'wake.consumed' | 'wake.cancelled', ids: string[], runId = 'wrun_by_hand') => {
      store.settleWakes(id, type, ids, { wakeRunId: runId, reason: 'test' });
      lines += ids.length;
    };
    for (let step = 0; step < 40; step++) {
      const snap = store.snapshot(id, { persist: r() < 0.7 });
      const x = r();
      if (x < 0.2) {
        store.scheduleWake(id, { due_at: iso(deps.clock.now() + Math.floor(r() * 120_000)), reason: `s${step}`, source: 'agent' });
        lines += 1;
      } else if (x < 0.3) {
        append(r() < 0.5 ? `{"delay_seconds":${Math.floor(r() * 90)},"reason":"h${step}"}` : `{"due_at":"${iso(deps.clock.now() + 30_000)}","reason":"h${step}"}`);
        handLines.push(lines);
      } else if (x < 0.38) {
        const before = fs.statSync(p.wakeQueue).size;
        store.snapshot(id, { pin: true });
        lines += fs.readFileSync(p.wakeQueue, 'utf8').slice(before).split('\n').length - 1;
      } else if (x < 0.45) {
        const n = pick(handLines);
        if (n !== undefined) append(JSON.stringify({ type: 'wake.scheduled', id: `wake_line_${n}`, due_at: iso(deps.clock.now()), reason: 'a pin', source: 'hand', created_at: iso(deps.clock.now()) }));
      } else if (x < 0.6) {
        const due = snap.pending_wakes.filter(() => r() < 0.6).map((w) => w.id);
        if (due.length) {
          const runId = take(store, id, due);
          if (r() < 0.6) settle('wake.consumed', due, runId); // else the run died before its records
        }
      } else if (x < 0.68) {
        const w = pick(snap.wakes_taken);
        if (w) settle('wake.consumed', [w]);
      } else if (x < 0.78) {
        const w = pick([...snap.pending_wakes.map((v) => v.id), ...snap.wakes_taken]);
        if (w) settle('wake.cancelled', [w]);
      } else if (x < 0.82) {
        settle(r() < 0.5 ? 'wake.consumed' : 'wake.cancelled', [r() < 0.5 ? 'wake_unknown' : `wake_line_${lines + 5}`]);
      } else if (x < 0.85) {
        append('{"reason":"no time"}');
      } else {
        await deps.clock.advance(Math.floor(r() * 60_000));
      }
    }
    const now = deps.clock.now();
    const snap = store.snapshot(id);
    const v = viewWakes(store.readWakes(id), now, snap);
    const where = `seed ${seed}`;
    const ids = (xs: Array<{ id: string }>) => xs.map((w) => w.id).sort();
    assert.deepEqual(ids(v.wakes.filter((w) => w.state === 'pending' || w.state === 'due')), ids(snap.pending_wakes), `${where}: pending`);
    for (const w of v.wakes.filter((w) => w.state === 'pending' || w.state === 'due')) assert.equal(w.state === 'due', Date.parse(w.due_at) <= now, `${where}: due`);
    assert.equal(v.wakes.filter((w) => w.state === 'consumed' && w.settled_at !== null).length, snap.wakes_consumed, `${where}: consumed`);
    assert.equal(v.wakes.filter((w) => w.state === 'consumed' && w.settled_at === null).length, snap.wakes_taken.length, `${where}: taken`);
    assert.equal(v.wakes.filter((w) => w.state === 'cancelled').length, snap.wakes_cancelled, `${where}: cancelled`);
    assert.equal(v.invalid.length, snap.rejected.filter((x) => x.file === 'wake-queue.jsonl').length, `${where}: bad lines`);
    fs.rmSync(p.snapshot);
    const scratch = store.snapshot(id, { persist: false });
    assert.deepEqual(
      [ids(scratch.pending_wakes), [...scratch.wakes_taken].sort(), scratch.wakes_consumed, scratch.wakes_cancelled],
      [ids(snap.pending_wakes), [...snap.wakes_taken].sort(), snap.wakes_consumed, snap.wakes_cancelled],
      `${where}: a fold from scratch`,
    );
  }
});
