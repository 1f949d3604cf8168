/**
 * The safety sweep (src/daemon/session-sweep.ts) on a manual clock: the
 * periods between full sweeps look only at the sessions that gave a sign of
 * change (a hint, a stuck inbox); every FULL_SWEEP_EVERY-th period looks at
 * all of them, so a change no watcher reported is found within that bound.
 * The search feed's sweep keeps the same rhythm.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { bench, type Bench } from '../helpers/run.js';
import { ManualClock } from '../helpers/clock.js';
import Database from 'better-sqlite3';
import { FULL_SWEEP_EVERY, SessionSweep } from '../../src/daemon/session-sweep.js';
import { SearchFeed } from '../../src/daemon/search-feed.js';
import { searchDbFile } from '../../src/core/search/search-db.js';
import { sendMessage } from '../../src/core/ops/session-ops.js';
import { until } from '../helpers/until.js';

const PERIOD = 30_000;

function sweepOf(b: Bench, clock: ManualClock, o: { stuck?: string[]; inboxWork?: (id: string) => boolean } = {}) {
  const stale: string[] = [];
  const sweep = new SessionSweep({
    clock,
    periodMs: PERIOD,
    store: b.store,
    sessionsDir: b.h.home.sessionsDir,
    inboxWork: o.inboxWork ?? (() => false),
    inboxStuck: (id) => (o.stuck ?? []).includes(id),
    stuckInboxes: () => o.stuck ?? [],
    onStale: (id) => stale.push(id),
  });
  for (const id of b.store.listIds()) sweep.note(id, b.store.snapshot(id));
  return { sweep, stale };
}

/** Advances one period and lets the sweep's slices run. */
async function period(clock: ManualClock) {
  await clock.advance(PERIOD);
  await nextTurn();
}

const append = (b: Bench, id: string) => fs.appendFileSync(b.store.paths(id).events, '{"type":"user.message","content":"by hand"}\n');

test('between full sweeps, a change nothing hinted is not looked for; the full sweep finds it within FULL_SWEEP_EVERY periods', async (t) => {
  const b = await bench(t);
  const [quiet, hinted] = [b.session(), b.session()];
  const clock = new ManualClock();
  const { sweep, stale } = sweepOf(b, clock);
  sweep.start();
  t.after(() => sweep.stop());
  append(b, quiet); // a watcher missed this one
  append(b, hinted);
  sweep.hinted(hinted);
  await period(clock);
  assert.deepEqual(stale, [hinted], 'the hinted session is looked at; the other is not even stat-ed');
  sweep.note(hinted, b.store.snapshot(hinted)); // as the daemon's look does
  for (let p = 2; p < FULL_SWEEP_EVERY; p++) await period(clock);
  assert.deepEqual(stale, [hinted], 'nor in the periods before the full sweep');
  await period(clock);
  assert.deepEqual(stale, [hinted, quiet], `found by the full sweep, ${FULL_SWEEP_EVERY} periods in at most`);
});

test('a session hinted is looked at once by the next sweep, not again while nothing new is hinted', async (t) => {
  const b = await bench(t);
  const id = b.session();
  const clock = new ManualClock();
  const { sweep, stale } = sweepOf(b, clock);
  sweep.start();
  t.after(() => sweep.stop());
  sweep.hinted(id);
  append(b, id);
  await period(clock);
  assert.deepEqual(stale, [id]);
  sweep.note(id, b.store.snapshot(id)); // as the daemon's look does
  append(b, id);
  await period(clock);
  assert.deepEqual(stale, [id], 'the mark was used up');
});

test('run(true), the sweep of the start, looks at every session: moved, new, or with inbox work', async (t) => {
  const b = await bench(t);
  const [moved, still, withInbox] = [b.session(), b.session(), b.session()];
  const clock = new ManualClock();
  const { sweep, stale } = sweepOf(b, clock, { inboxWork: (id) => id === withInbox });
  const unseen = b.session(); // not noted: new to the sweep
  append(b, moved);
  fs.mkdirSync(b.store.paths(withInbox).inbox, { recursive: true });
  sweep.run(true);
  await nextTurn();
  assert.deepEqual(stale.sort(), [moved, unseen, withInbox].sort());
  assert.ok(!stale.includes(still));
});

test('a stuck inbox is listed every period, full sweep or not', async (t) => {
  const b = await bench(t);
  const [stuck, other] = [b.session(), b.session()];
  fs.mkdirSync(b.store.paths(stuck).inbox, { recursive: true });
  fs.mkdirSync(b.store.paths(other).inbox, { recursive: true });
  const clock = new ManualClock();
  const listed: string[] = [];
  const { sweep } = sweepOf(b, clock, {
    stuck: [stuck],
    inboxWork: (id) => {
      listed.push(id);
      return false;
    },
  });
  sweep.start();
  t.after(() => sweep.stop());
  await period(clock);
  await period(clock);
  assert.deepEqual(listed, [stuck, stuck]);
});

test("the search feed's sweeps go on with what a busy lock left unfinished, and stat every log every FULL_SWEEP_EVERY-th only", async (t) => {
  const b = await bench(t);
  const [hinted, missed] = [b.session(), b.session()];
  const feed = new SearchFeed({ rt: b.rt, sweepMs: PERIOD, notice: () => undefined });
  t.after(() => feed.stop());
  await feed.start();
  const holder = new Database(searchDbFile(b.h.home));
  t.after(() => holder.close());
  holder.exec('BEGIN IMMEDIATE');
  sendMessage(b.store, hinted, 'hinted wombat');
  feed.hint(hinted);
  await nextTurn(); // the flush (on the hint's next turn) meets the busy lock and leaves the session unfinished
  await nextTurn();
  holder.exec('ROLLBACK');
  sendMessage(b.store, missed, 'missed platypus'); // no hint: a watcher missed it
  assert.equal(indexed(b, 'wombat'), 0);
  const sweepOnce = async () => {
    await b.deps.clock.armed(PERIOD); // the feed arms its next sweep once the last is done
    await b.deps.clock.advance(PERIOD);
  };
  await sweepOnce();
  await until(() => indexed(b, 'wombat') === 1);
  assert.equal(indexed(b, 'platypus'), 0, 'a sweep between full ones stats no log');
  for (let p = 2; p < FULL_SWEEP_EVERY; p++) await sweepOnce();
  await b.deps.clock.armed(PERIOD);
  assert.equal(indexed(b, 'platypus'), 0);
  await sweepOnce();
  await until(() => indexed(b, 'platypus') === 1);
});

function indexed(b: Bench, word: string): number {
  const db = new Database(searchDbFile(b.h.home), { readonly: true, fileMustExist: true });
  try {
    return (db.prepare('SELECT count(*) AS n FROM fts WHERE fts MATCH ?').get(`"${word}"`) as { n: number }).n;
  } finally {
    db.close();
  }
}
