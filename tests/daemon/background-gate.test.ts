/**
 * BackgroundGate (src/daemon/background-gate.ts): background work's next
 * turn waits while a run is starting, goes on a turn after it opened, and
 * never waits past its bound on the clock; the watcher holds it while a hint
 * waits to be passed on, and the search feed's catch-up asks it between
 * chunks.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { BackgroundGate } from '../../src/daemon/background-gate.js';
import fs from 'node:fs';
import Database from 'better-sqlite3';
import { ManualClock } from '../helpers/clock.js';
import { bench, type Bench } from '../helpers/run.js';
import { beforeHomeRemoved } from '../helpers/home.js';
import { SessionWatcher } from '../../src/daemon/session-watcher.js';
import { SearchFeed } from '../../src/daemon/search-feed.js';
import { searchDbFile } from '../../src/core/search/search-db.js';
import { until } from '../helpers/until.js';

/** Runs `n` turns of the event loop. */
async function turns(n: number) {
  for (let i = 0; i < n; i++) await nextTurn();
}

test('with no run starting, background work goes on after one turn of the event loop', async () => {
  const gate = new BackgroundGate(new ManualClock());
  const order: string[] = [];
  setImmediate(() => order.push('turn queued before'));
  await gate.turn();
  order.push('background');
  assert.deepEqual(order, ['turn queued before', 'background']);
});

test('while a run is starting, background work waits; once it has opened, its continuation goes first', async () => {
  const clock = new ManualClock();
  const gate = new BackgroundGate(clock);
  const order: string[] = [];
  const opened = gate.hold();
  assert.equal(gate.busy, true);
  const background = gate.turn().then(() => order.push('background'));
  await turns(20);
  assert.equal(order.length, 0, 'no slice while the run starts, however many turns pass');
  opened();
  setImmediate(() => order.push('the opened run goes on'));
  await background;
  assert.deepEqual(order, ['the opened run goes on', 'background']);
  assert.equal(gate.busy, false);
  assert.equal(clock.pendingTimers, 0, 'the bound on the wait is cancelled');
});

test('a hold ends once however often its end is called, and every hold must end before background work goes on', async () => {
  const gate = new BackgroundGate(new ManualClock());
  const a = gate.hold();
  const b = gate.hold();
  let went = false;
  const background = gate.turn().then(() => (went = true));
  a();
  a();
  await turns(5);
  assert.equal(went, false, 'b still holds');
  assert.equal(gate.busy, true);
  b();
  await background;
  assert.equal(went, true);
});

test('a stream of starts slows background work, never stops it: it goes on after maxWaitMs on the clock', async () => {
  const clock = new ManualClock();
  const gate = new BackgroundGate(clock, 1000);
  gate.hold(); // never ends
  let went = false;
  const background = gate.turn().then(() => (went = true));
  await clock.armed(1000);
  await clock.advance(999);
  await turns(3);
  assert.equal(went, false);
  await clock.advance(1);
  await background;
  assert.equal(went, true);
});

test('a watcher hint holds background work back from its arrival until it has been passed on', async (t) => {
  const b = await bench(t);
  const id = b.session();
  const gate = new BackgroundGate(b.deps.clock);
  const seen: Array<{ id: string; busy: boolean }> = [];
  let ready = false;
  const w = new SessionWatcher({
    sessionsDir: b.h.home.sessionsDir,
    clock: b.deps.clock,
    poll: false,
    onHint: (x) => seen.push({ id: x, busy: gate.busy }),
    onGone: () => undefined,
    onWarn: () => undefined,
    onReady: () => (ready = true),
    holdWhilePending: () => gate.hold(),
  });
  beforeHomeRemoved(t, () => w.close());
  w.start();
  await until(() => ready);
  fs.appendFileSync(b.store.paths(id).events, '{"type":"user.message","content":"hello"}\n');
  await until(() => seen.length > 0);
  assert.deepEqual(seen[0], { id, busy: true }, 'held while the hint is passed on');
  assert.equal(gate.busy, false, 'released once it has been');
});

test("the search feed's catch-up takes its next chunk only when nextTurn says so", async (t) => {
  const b = await bench(t);
  const id = b.session();
  const lines = Array.from({ length: 400 }, (_, i) => JSON.stringify({ type: 'user.message', content: `line ${i}` }));
  fs.appendFileSync(b.store.paths(id).events, `${lines.join('\n')}\n`);
  let asked = 0;
  let go: () => void = () => undefined;
  const feed = new SearchFeed({
    rt: b.rt,
    sweepMs: Infinity,
    notice: () => undefined,
    nextTurn: () => {
      asked += 1;
      return new Promise<void>((resolve) => (go = resolve));
    },
  });
  beforeHomeRemoved(t, () => feed.stop());
  const started = feed.start();
  await until(() => asked === 1);
  const after1 = indexedLines(b, id);
  assert.ok(after1 > 0 && after1 < 400, `one chunk indexed (${after1} lines), not the log`);
  await turns(10);
  assert.equal(indexedLines(b, id), after1, 'nothing more while nextTurn has not resolved');
  assert.equal(asked, 1);
  let done = false;
  void started.then(() => (done = true));
  while (!done) {
    const n = asked;
    go();
    await until(() => done || asked > n);
  }
  assert.equal(indexedLines(b, id), 401);
});

/** The line the search index has read a session's log up to, read without catching anything up. */
function indexedLines(b: Bench, id: string): number {
  const db = new Database(searchDbFile(b.h.home), { readonly: true, fileMustExist: true });
  try {
    return (db.prepare('SELECT cur_line FROM sessions WHERE session_id = ?').get(id) as { cur_line: number } | undefined)?.cur_line ?? 0;
  } finally {
    db.close();
  }
}
