/**
 * The home's doorbell (sessions/.ring/): the delivery function rings after
 * its inbox rename (core/store/ring.ts), and a polling daemon's reader
 * (daemon/ring-reader.ts) lists the folder every tick, removes the entries
 * of its share and hints their sessions.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { ring, RING_DIR } from '../../src/core/store/ring.js';
import { RingReader, RING_PER_TICK, RING_RECHECK_MS, RING_TICK_MS } from '../../src/daemon/ring-reader.js';
import { SessionStore } from '../../src/core/store/session-store.js';
import { sendMessage } from '../../src/core/ops/session-ops.js';
import { uuidv7 } from '../../src/core/foundation/ids.js';
import { ManualClock } from '../helpers/clock.js';
import { tempHome } from '../helpers/home.js';
import { unitRun } from '../helpers/unit-run.js';
import { until } from '../helpers/until.js';

/** A sessions/ folder with `n` session folders (all the reader needs of a session), and a reader over it. */
function setup(t: TestContext, n: number, o: { owns?: (id: string) => boolean; perTick?: number } = {}) {
  const h = tempHome(t, { bundled: false });
  const sessionsDir = h.home.sessionsDir;
  const ids = Array.from({ length: n }, () => uuidv7());
  for (const id of ids) fs.mkdirSync(path.join(sessionsDir, id), { recursive: true });
  const clock = new ManualClock();
  const hints: string[] = [];
  const warnings: string[] = [];
  const reader = new RingReader({ sessionsDir, clock, onHint: (id) => hints.push(id), onWarn: (m) => warnings.push(m), ...o });
  t.after(() => reader.close());
  const ringDir = path.join(sessionsDir, RING_DIR);
  const entries = () => (fs.existsSync(ringDir) ? fs.readdirSync(ringDir).sort() : []);
  return { sessionsDir, ids, clock, hints, warnings, reader, ringDir, entries };
}

test('a delivery on a shared home rings after its inbox rename; on a home for one host it appends and rings nothing', (t) => {
  const u = unitRun(t);
  const id = u.newSession();
  const shared = new SessionStore(u.h.home, u.deps, { shared: true });
  const ringDir = path.join(u.h.home.sessionsDir, RING_DIR);
  sendMessage(u.store, id, 'local');
  assert.ok(!fs.existsSync(ringDir), 'no doorbell on a home for one host');
  sendMessage(shared, id, 'from another host');
  assert.deepEqual(fs.readdirSync(ringDir), [id]);
  assert.equal(fs.readdirSync(u.store.paths(id).inbox).filter((n) => !n.startsWith('.')).length, 1, 'the event is in inbox/');
  sendMessage(shared, id, 'again');
  assert.deepEqual(fs.readdirSync(ringDir), [id], 'one entry per session, however often it is rung');
  assert.equal(fs.statSync(path.join(ringDir, id)).size, 0);
});

test('ring() refuses a .ring that is a symlink or a file, and never writes through it', (t) => {
  const h = tempHome(t, { bundled: false });
  const sessionsDir = h.home.sessionsDir;
  fs.mkdirSync(sessionsDir, { recursive: true });
  const elsewhere = path.join(h.root, 'elsewhere');
  fs.mkdirSync(elsewhere);
  fs.symlinkSync(elsewhere, path.join(sessionsDir, RING_DIR));
  const id = uuidv7();
  assert.equal(ring(sessionsDir, id), false);
  assert.deepEqual(fs.readdirSync(elsewhere), [], 'nothing made through the symlink');
  fs.unlinkSync(path.join(sessionsDir, RING_DIR));
  fs.writeFileSync(path.join(sessionsDir, RING_DIR), 'not a folder');
  assert.equal(ring(sessionsDir, id), false);
  assert.equal(fs.readFileSync(path.join(sessionsDir, RING_DIR), 'utf8'), 'not a folder');
  fs.unlinkSync(path.join(sessionsDir, RING_DIR));
  // An entry that is a symlink is not followed either (O_NOFOLLOW): the ring is refused, its target untouched.
  fs.mkdirSync(path.join(sessionsDir, RING_DIR));
  fs.symlinkSync(path.join(elsewhere, 'target'), path.join(sessionsDir, RING_DIR, id));
  assert.equal(ring(sessionsDir, id), false);
  assert.ok(!fs.existsSync(path.join(elsewhere, 'target')));
});

test('the reader lists the doorbell every tick of its clock, removes each entry, then hints its session', async (t) => {
  const s = setup(t, 3);
  const [a, b] = s.ids as [string, string];
  s.reader.start();
  await s.clock.advance(99);
  assert.equal(s.reader.ticks, 0, 'no listing before the first tick');
  await s.clock.advance(1);
  await until(() => s.reader.ticks === 1);
  assert.deepEqual(s.hints, [], 'nothing rung: a missing folder is normal');
  assert.deepEqual(s.warnings, []);
  ring(s.sessionsDir, a);
  ring(s.sessionsDir, b);
  await s.clock.advance(100);
  await until(() => s.reader.ticks === 2);
  assert.deepEqual(s.hints.sort(), [a, b].sort());
  assert.deepEqual(s.entries(), [], 'taken entries are removed');
  await s.clock.advance(100);
  await until(() => s.reader.ticks === 3);
  assert.equal(s.hints.length, 2, 'a removed entry is not hinted again by the listing');
  // ...but its session once more after the recheck time, for a mount whose cached listing of its inbox/ was stale.
  await s.clock.advance(RING_RECHECK_MS);
  assert.deepEqual(s.hints.slice(2).sort(), [a, b].sort());
  await s.clock.advance(RING_RECHECK_MS * 2);
  assert.equal(s.hints.length, 4, 'once');
  await s.reader.close();
  ring(s.sessionsDir, a);
  const ticks = s.reader.ticks;
  await s.clock.advance(RING_RECHECK_MS * 2);
  assert.equal(s.reader.ticks, ticks, 'no tick after close()');
  assert.equal(s.hints.length, 4);
});

test('entries that name no session are removed and not hinted; the entries of other shards are left', async (t) => {
  const mine = new Set<string>();
  const s = setup(t, 4, { owns: (id) => mine.has(id) });
  const [ours, theirs] = s.ids as [string, string];
  mine.add(ours);
  const ghost = uuidv7(); // a session id with no folder (deleted meanwhile, or never made)
  mine.add(ghost);
  for (const id of [ours, theirs, ghost]) ring(s.sessionsDir, id);
  fs.writeFileSync(path.join(s.ringDir, 'not-a-session'), '');
  fs.writeFileSync(path.join(s.ringDir, '.hidden'), '');
  await s.reader.tick();
  assert.deepEqual(s.hints, [ours]);
  assert.deepEqual(s.entries(), [theirs], 'garbage and the ghost removed; the other shard’s entry left for its daemon');
  assert.deepEqual(s.warnings, []);
});

test('a doorbell that is a symlink or a file is not read through, is reported once, and works again once fixed', async (t) => {
  const s = setup(t, 1);
  const [id] = s.ids as [string];
  const elsewhere = path.join(path.dirname(s.sessionsDir), 'elsewhere');
  fs.mkdirSync(elsewhere);
  fs.writeFileSync(path.join(elsewhere, id), '');
  fs.writeFileSync(path.join(elsewhere, 'precious'), 'keep me');
  fs.symlinkSync(elsewhere, s.ringDir);
  await s.reader.tick();
  await s.reader.tick();
  assert.deepEqual(s.hints, []);
  assert.deepEqual(fs.readdirSync(elsewhere).sort(), [id, 'precious'].sort(), 'nothing removed through the symlink');
  assert.equal(s.warnings.length, 1, `reported once: ${s.warnings.join(' | ')}`);
  assert.match(s.warnings[0]!, /is a symlink/);
  fs.unlinkSync(s.ringDir);
  fs.writeFileSync(s.ringDir, '');
  await s.reader.tick();
  assert.equal(s.warnings.length, 2);
  assert.match(s.warnings[1]!, /is not a folder/);
  fs.unlinkSync(s.ringDir);
  ring(s.sessionsDir, id);
  await s.reader.tick();
  assert.deepEqual(s.hints, [id], 'a real folder again: read again');
});

test('an entry that cannot be removed is hinted once, reported once, and does not stop the others', async (t) => {
  const s = setup(t, 2);
  const [stuck, fine] = s.ids as [string, string];
  fs.mkdirSync(path.join(s.ringDir, stuck, 'x'), { recursive: true }); // a folder with something in it
  ring(s.sessionsDir, fine);
  await s.reader.tick();
  assert.deepEqual(s.hints.sort(), [stuck, fine].sort());
  assert.equal(s.warnings.length, 1);
  assert.match(s.warnings[0]!, /cannot be removed/);
  ring(s.sessionsDir, fine);
  await s.reader.tick();
  assert.deepEqual(s.hints.filter((h) => h === stuck), [stuck], 'the stuck entry is not hinted every tick');
  assert.equal(s.hints.filter((h) => h === fine).length, 2);
  assert.equal(s.warnings.length, 1);
});

test('thousands rung at once are taken a bounded number per tick, the rest on the next turns without waiting a tick', async (t) => {
  const n = RING_PER_TICK * 2 + 100;
  const s = setup(t, n);
  for (const id of s.ids) ring(s.sessionsDir, id);
  await s.reader.tick();
  assert.equal(s.hints.length, RING_PER_TICK, 'one tick takes at most RING_PER_TICK');
  // The clock does not move: the rest are taken on the following turns of the event loop.
  await until(() => s.hints.length === n);
  assert.equal(new Set(s.hints).size, n);
  assert.deepEqual(s.entries(), []);
  await nextTurn();
});

/**
 * The reader's ticks once it waits for its clock again (its tick timer
 * armed), or as soon as it has ticked more than `n` times without waiting:
 * the clock never moves here, so every tick after the first is one the
 * reader took at once.
 */
async function ticksUntilIdle(s: ReturnType<typeof setup>, n: number) {
  let idle = false;
  void s.clock.armed(RING_TICK_MS).then(() => (idle = true));
  await until(() => idle || s.reader.ticks > n, 60_000); // some 2,600 removals tried: slow on a loaded machine
  return s.reader.ticks;
}

test('entries whose names are not UTF-8 are removed by their bytes, and do not keep the reader turning', async (t) => {
  const s = setup(t, 1);
  const [id] = s.ids as [string];
  fs.mkdirSync(s.ringDir, { recursive: true });
  const n = RING_PER_TICK + 44;
  for (let i = 0; i < n; i++) fs.writeFileSync(Buffer.concat([Buffer.from(`${s.ringDir}/x${i}-`), Buffer.from([0xff])]), '');
  ring(s.sessionsDir, id);
  await s.reader.tick();
  assert.equal(await ticksUntilIdle(s, 2), 2, 'one tick for the first RING_PER_TICK, one for the rest, then it waits for its clock');
  assert.deepEqual(s.entries(), []);
  assert.deepEqual(s.hints, [id]);
  assert.deepEqual(s.warnings, []);
  await s.clock.advance(100);
  await until(() => s.reader.ticks === 3);
});

test('more entries that cannot be removed than a tick takes are each tried once; the reader then waits for its clock', async (t) => {
  const s = setup(t, 1);
  const [id] = s.ids as [string];
  const n = 1024 + 300; // more than the reader once remembered, plus more than a tick takes
  for (let i = 0; i < n; i++) fs.mkdirSync(path.join(s.ringDir, `stuck-${i}`, 'x'), { recursive: true });
  ring(s.sessionsDir, id);
  const shares = Math.ceil((n + 1) / RING_PER_TICK);
  await s.reader.tick();
  const ticks = await ticksUntilIdle(s, shares);
  assert.equal(ticks, shares, 'each entry tried once, a tick’s share a turn');
  assert.deepEqual(s.hints, [id]);
  assert.equal(s.warnings.length, shares);
  assert.equal(s.entries().length, n, 'the folders are left as they are');
  assert.match(s.warnings[0]!, /stuck-\d+ and 25[45] more entries cannot be removed \(ENOTEMPTY\): they are left/, 'one notice a tick');
  // Then a listing at each tick of the clock, and nothing tried or said again.
  for (let k = 1; k <= 3; k++) {
    await s.clock.advance(100);
    await until(() => s.reader.ticks === ticks + k);
  }
  for (let i = 0; i < 20; i++) await nextTurn();
  assert.equal(s.reader.ticks, ticks + 3);
  assert.equal(s.warnings.length, shares);
  assert.deepEqual(s.hints, [id]);
});
