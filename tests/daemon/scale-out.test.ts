/**
 * The pieces that let several daemons share one home: polling by stats
 * (poll-watches.ts), shards (shard.ts), stray work picked up from other
 * shards (stray-pickup.ts), and an agent's max_concurrent_runs as slots on
 * the file system (agent-slots.ts), and a lease another process holds
 * watched for its end (lease-watch.ts).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { PollWatches } from '../../src/daemon/poll-watches.js';
import { owns, parseShard, shardOf } from '../../src/daemon/shard.js';
import { StrayPickup } from '../../src/daemon/stray-pickup.js';
import { AgentSlots } from '../../src/daemon/agent-slots.js';
import { ManualClock } from '../helpers/clock.js';
import { unitRun } from '../helpers/unit-run.js';
import { sendMessage } from '../../src/core/ops/session-ops.js';
import { SessionStore } from '../../src/core/store/session-store.js';
import type { SessionSnapshot } from '../../src/core/schema/index.js';
import { acquireLease } from '../../src/core/foundation/lease.js';
import { readLines } from '../../src/core/store/jsonl.js';
import { bench } from '../helpers/run.js';
import { startDaemon } from '../helpers/daemon.js';
import { until } from '../helpers/until.js';

test('polling: a change in a journal or the inbox is a hint; quiet rounds lengthen the interval; a change shortens it', async (t) => {
  const u = unitRun(t);
  const [a, b] = [u.newSession(), u.newSession()];
  const clock = new ManualClock();
  const hints: string[] = [];
  const gone: string[] = [];
  // Rounds that cost no CPU: the interval follows changes alone (spacing by cost is the next test's).
  const w = new PollWatches({ sessionsDir: u.h.home.sessionsDir, clock, minMs: 100, maxMs: 1000, cpuMs: () => 0, onHint: (id) => hints.push(id), onGone: (id) => gone.push(id) });
  t.after(() => w.close());
  const ready = new Promise((r) => w.once('ready', r));
  w.start();
  await ready;
  assert.deepEqual(hints, [], 'the first round only records');
  const round = async (ms: number) => {
    const before = w.rounds;
    await clock.advance(ms);
    while (w.rounds === before) await nextTurn();
  };
  await round(w.nextIntervalMs);
  assert.deepEqual(hints, []);
  const quiet = w.nextIntervalMs;
  assert.ok(quiet > 100, `a quiet round lengthens the interval (${quiet})`);
  fs.appendFileSync(u.store.paths(a).events, '{"type":"user.message","content":"x"}\n');
  await round(quiet);
  assert.deepEqual(hints, [a]);
  assert.equal(w.nextIntervalMs, 100, 'a change brings the interval back to the shortest');
  // A first drop: the writer makes inbox/ (made on first use) and puts a file in it.
  fs.mkdirSync(u.store.paths(b).inbox);
  fs.writeFileSync(path.join(u.store.paths(b).inbox, 'm.json'), '{}');
  await round(100);
  assert.deepEqual(hints, [a, b]);
  for (let i = 0; i < 12; i++) await round(w.nextIntervalMs);
  assert.equal(w.nextIntervalMs, 1000, 'an idle home is polled at the longest interval');
  fs.rmSync(u.store.paths(b).dir, { recursive: true });
  await round(1000);
  assert.deepEqual(gone, [b]);
});

test('the polling round is made no more often than its own CPU time allows (2 % of a core), up to a cap', async (t) => {
  const u = unitRun(t);
  u.newSession();
  const clock = new ManualClock();
  // A CPU meter where every round costs 100 ms: 100 / 0.02 = 5 s between rounds, whatever maxMs says.
  let cpu = 0;
  const cpuMs = () => (cpu += 50);
  const w = new PollWatches({ sessionsDir: u.h.home.sessionsDir, clock, minMs: 1000, maxMs: 1000, cpuMs, onHint: () => undefined, onGone: () => undefined });
  t.after(() => w.close());
  const ready = new Promise((r) => w.once('ready', r));
  w.start();
  await ready;
  assert.equal(w.lastRoundCpuMs, 50);
  assert.equal(w.nextIntervalMs, 2500, 'a round of 50 ms of CPU: every 2.5 s');
  const capped = new PollWatches({ sessionsDir: u.h.home.sessionsDir, clock, minMs: 1000, maxMs: 1000, capMs: 2000, cpuMs, onHint: () => undefined, onGone: () => undefined });
  t.after(() => capped.close());
  const ready2 = new Promise((r) => capped.once('ready', r));
  capped.start();
  await ready2;
  assert.equal(capped.nextIntervalMs, 2000, 'at most capMs');
});

test('polling with a shard stats only its own sessions, and still reports new ones', async (t) => {
  const u = unitRun(t);
  const shard = parseShard('0/2');
  // Ids are random: at least six, and more until both shards hold one (so the test always tests something).
  const ids: string[] = [];
  while (ids.length < 6 || ids.every((id) => owns(shard, id)) || ids.every((id) => !owns(shard, id))) {
    assert.ok(ids.length < 64, 'the shard hash put 64 random ids in one shard');
    ids.push(u.newSession());
  }
  const mine = ids.filter((id) => owns(shard, id));
  const theirs = ids.filter((id) => !owns(shard, id));
  const clock = new ManualClock();
  const hints: string[] = [];
  const w = new PollWatches({ sessionsDir: u.h.home.sessionsDir, clock, minMs: 100, maxMs: 100, cpuMs: () => 0, owns: (id) => owns(shard, id), onHint: (id) => hints.push(id), onGone: () => undefined });
  t.after(() => w.close());
  const ready = new Promise((r) => w.once('ready', r));
  w.start();
  await ready;
  for (const id of ids) fs.appendFileSync(u.store.paths(id).events, '\n');
  const before = w.rounds;
  await clock.advance(100);
  while (w.rounds === before) await nextTurn();
  assert.deepEqual(hints.sort(), [...mine].sort());
});

test('shards: "i/n" is checked; the hash is stable and spreads ids evenly', () => {
  assert.deepEqual(parseShard('2/3'), { index: 2, count: 3 });
  for (const bad of ['3/3', '1', '-1/2', '0/0', 'a/b']) assert.throws(() => parseShard(bad), /expected i\/n/);
  assert.equal(shardOf('019a8f6e-0000-7000-8000-000000000000', 7), shardOf('019a8f6e-0000-7000-8000-000000000000', 7));
  const counts = [0, 0, 0];
  for (let i = 0; i < 3000; i++) counts[shardOf(`019a8f6e-${String(i).padStart(4, '0')}-7000-8000-${String(i * 7919).padStart(12, '0')}`, 3)]! += 1;
  for (const c of counts) assert.ok(c > 850 && c < 1150, `uneven: ${counts}`);
  assert.ok(owns(null, 'x') && owns({ index: 0, count: 1 }, 'x'));
});

test("stray work in another daemon's shard is adopted once it has waited a whole period untouched", async (t) => {
  const u = unitRun(t);
  const [waiting, idle, mine] = [u.newSession(), u.newSession(), u.newSession()];
  sendMessage(u.store, waiting, 'anyone?');
  const adopted: string[] = [];
  const s = new StrayPickup({ clock: u.deps.clock, periodMs: 5000, leaseStaleMs: 10_000, store: u.store, sessionsDir: u.h.home.sessionsDir, owns: (id) => id === mine, busy: () => false, adopt: (id: string, _snap: SessionSnapshot) => adopted.push(id) });
  await s.pass();
  assert.deepEqual(adopted, [], 'first look: its owner may be about to take it');
  await s.pass();
  assert.deepEqual(adopted, [waiting], 'still waiting, nothing written: adopted');
  // Work its owner is making progress on (its log grows between looks) is left to the owner.
  const busy = u.newSession();
  sendMessage(u.store, busy, 'one');
  await s.pass();
  sendMessage(u.store, busy, 'two');
  await s.pass();
  const after: string[] = adopted; // (deepEqual above narrowed its type)
  assert.ok(!after.includes(busy) && !after.includes(idle) && !after.includes(mine));
  // Messages that keep arriving through inbox/ (a shared home) are new input, not progress: still adopted.
  const flooded = u.newSession();
  const shared = new SessionStore(u.h.home, u.deps, { shared: true });
  sendMessage(shared, flooded, 'first');
  await s.pass();
  sendMessage(shared, flooded, 'second');
  await s.pass();
  assert.ok(after.includes(flooded), "a dead owner's session is taken even while messages keep arriving");
});

test('a stray pass gives way between slices, and the next waits what keeps its CPU under its share of a core', async (t) => {
  const u = unitRun(t);
  for (let i = 0; i < 1001; i++) u.newSession();
  let cpu = 0;
  let turns = 0;
  const s = new StrayPickup({
    clock: u.deps.clock,
    periodMs: 2500,
    leaseStaleMs: 10_000,
    store: u.store,
    sessionsDir: u.h.home.sessionsDir,
    owns: () => false,
    busy: () => false,
    adopt: () => undefined,
    cpuShare: 0.02,
    capMs: 60_000,
    cpuMs: () => (cpu += 40),
    nextTurn: async () => {
      turns += 1;
    },
  });
  await s.pass();
  assert.equal(turns, 2, '1,001 sessions: three slices of at most 500');
  // Each slice is measured as 40 ms of CPU: 120 ms at 2 % is a pass every 6 s, not every 2.5 s.
  assert.equal(s.nextPeriodMs, 6000);
  const cheap = new StrayPickup({ clock: u.deps.clock, periodMs: 2500, leaseStaleMs: 10_000, store: u.store, sessionsDir: u.h.home.sessionsDir, owns: () => false, busy: () => false, adopt: () => undefined, cpuMs: () => 0 });
  await cheap.pass();
  assert.equal(cheap.nextPeriodMs, 2500, 'a cheap pass keeps the period');
});

test('max_concurrent_runs: slots on the file system hold across daemons, even when they try at the same instant', async (t) => {
  const u = unitRun(t);
  const daemons = [0, 1, 2].map(() => new AgentSlots({ home: u.h.home, shared: false, staleMs: 10_000, nowIso: () => new Date().toISOString(), random: () => 0.5 }));
  const tries = await Promise.allSettled(Array.from({ length: 9 }, (_, i) => daemons[i % 3]!.take('unit', 2, `run-${i}`)));
  const held = tries.flatMap((r) => (r.status === 'fulfilled' && r.value ? [r.value] : []));
  assert.equal(held.length, 2);
  for (const r of tries) if (r.status === 'rejected') assert.match((r.reason as Error).message, /agent unit has its max_concurrent_runs \(2\) runs going/);
  assert.equal(await daemons[0]!.take('unit', undefined, 'free'), null, 'no limit, no slot');
  await held[0]!.release();
  const next = await daemons[2]!.take('unit', 2, 'run-9');
  assert.ok(next);
  await next.release();
  await held[1]!.release();
});

test('a session held back because another process holds its lease runs as soon as that lease is released, not after the stale time', async (t) => {
  const b = await bench(t, { steps: [{ text: 'after the lease' }] });
  const id = b.session();
  // Another process's run (a daemon on another host, an `openboa wake`): the lease is taken, and a message arrives.
  const lease = await acquireLease(b.store.paths(id), { purpose: 'test', nowIso: new Date().toISOString() });
  let held = true;
  t.after(() => (held ? lease.release() : undefined));
  sendMessage(b.store, id, 'while another run holds the lease');
  const td = await startDaemon(t, b);
  const activations = () => readLines(path.join(b.store.paths(id).runtime, 'activations.jsonl')).lines.map((l) => JSON.parse(l.text) as { kind: string; retry_at?: string });
  await until(() => fs.existsSync(path.join(b.store.paths(id).runtime, 'activations.jsonl')) && activations().some((a) => a.kind === 'blocked'));
  const blocked = activations().find((a) => a.kind === 'blocked')!;
  assert.ok(Date.parse(blocked.retry_at!) - b.deps.clock.now() >= 10_000, 'held back until the lease could have gone stale');
  await lease.release();
  held = false;
  // A quarter of a second of the daemon's clock later (not the 11 s of the hold), the lease is seen gone.
  await b.deps.clock.advance(250);
  const r = await td.result((x) => x.session_id === id && x.outcome === 'executed');
  assert.deepEqual(r.stop_reason, { type: 'end_turn' });
  assert.equal(r.processed_event_ids.length, 1);
});

test('on a shared home the daemon leaves a hand-written delay unpinned until a run takes the lease, then runs it when due', async (t) => {
  const b = await bench(t, { steps: [{ text: 'looked again' }] });
  const id = b.session();
  // As on a home shared between hosts: the wake queue is written only under the session's lease.
  const rt = { ...b.rt, store: new SessionStore(b.h.home, b.deps, { shared: true }) };
  const queue = () => readLines(b.store.paths(id).wakeQueue).lines.map((l) => JSON.parse(l.text) as Record<string, unknown>);
  fs.appendFileSync(b.store.paths(id).wakeQueue, `${JSON.stringify({ type: 'wake.scheduled', delay_seconds: 5, reason: 'by hand' })}\n`);
  await startDaemon(t, { rt });
  // The start scan folded it (a provisional due time 5 s on) without writing the pin outside a lease.
  assert.equal(rt.store.snapshot(id, { persist: false }).pending_wakes.length, 1);
  assert.deepEqual(queue().map((r) => r.type), ['wake.scheduled'], 'nothing appended to the queue outside the lease');
  await b.deps.clock.advance(5_000);
  await until(() => queue().some((r) => r.type === 'wake.consumed'));
  const types = queue().map((r) => r.type);
  assert.deepEqual(types, ['wake.scheduled', 'wake.scheduled', 'wake.consumed'], 'the run pinned it under its lease, then consumed it');
});
