/**
 * The store's in-memory folds (src/core/store/fold-cache.ts): a snapshot of
 * unchanged journals is served from memory, and any change to either
 * journal or to session.json is folded again.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { SessionStore } from '../../src/core/store/session-store.js';
import { FoldCache } from '../../src/core/store/fold-cache.js';
import { createSession } from '../../src/core/ops/create-session.js';
import { tempHome } from '../helpers/home.js';
import { testDeps } from '../helpers/deps.js';
import type { SessionSnapshot } from '../../src/core/schema/index.js';

function setup(t: Parameters<typeof tempHome>[0]) {
  const h = tempHome(t);
  const store = new SessionStore(h.home, testDeps());
  const s = createSession(store, { agent: 'demo' });
  return { store, id: s.id, p: store.paths(s.id) };
}

/** Counts reads of `file` through fs.readFileSync while `fn` runs. */
function readsOf(t: TestContext, file: string, fn: () => void): number {
  let n = 0;
  const real = fs.readFileSync;
  const spy = t.mock.method(fs, 'readFileSync', (...args: Parameters<typeof fs.readFileSync>) => {
    if (args[0] === file) n += 1;
    return real(...args);
  });
  try {
    fn();
  } finally {
    spy.mock.restore();
  }
  return n;
}

test('a snapshot of unchanged journals is served from memory: session.json is not read again', (t) => {
  const { store, id, p } = setup(t);
  const first = store.snapshot(id);
  const reads = readsOf(t, p.snapshot, () => {
    for (let i = 0; i < 5; i++) assert.deepEqual(store.snapshot(id), first);
  });
  assert.equal(reads, 0);
});

test('every append, by the store or by hand, is folded at the next snapshot', (t) => {
  const { store, id, p } = setup(t);
  store.snapshot(id);
  for (let i = 0; i < 20; i++) {
    // Appends made within one tick of the file system's clock still change the size.
    fs.appendFileSync(p.events, `{"type":"user.message","content":"m${i}"}\n`);
    assert.equal(store.snapshot(id).pending_events.length, i + 1);
  }
  fs.appendFileSync(p.wakeQueue, `{"type":"wake.scheduled","id":"wake_a","due_at":"2030-01-01T00:00:00.000Z","reason":"later","created_at":"2026-11-23T10:00:00.000Z"}\n`);
  assert.deepEqual(
    store.snapshot(id).pending_wakes.map((w) => w.id),
    ['wake_a'],
  );
});

test('a journal replaced by another file of the same size is folded again', (t) => {
  const { store, id, p } = setup(t);
  fs.appendFileSync(p.events, '{"type":"user.message","content":"aaaaa"}\n');
  assert.equal(store.snapshot(id).pending_events.length, 1);
  const text = fs.readFileSync(p.events, 'utf8').replace('"content":"aaaaa"}\n', '"content":"bb"}\n{}\n');
  assert.equal(Buffer.byteLength(text), fs.statSync(p.events).size);
  fs.writeFileSync(`${p.events}.new`, text);
  fs.renameSync(`${p.events}.new`, p.events);
  const after = store.snapshot(id);
  assert.equal(after.rejected.length, 1, 'the new file was read: its `{}` line is rejected');
});

test('a session.json removed or damaged by hand is read and rebuilt again, not hidden by memory', (t) => {
  const { store, id, p } = setup(t);
  const before = store.snapshot(id);
  fs.rmSync(p.snapshot);
  assert.equal(store.snapshot(id).id, before.id);
  assert.ok(fs.existsSync(p.snapshot), 'written back');
  fs.writeFileSync(p.snapshot, '{"format":');
  store.snapshot(id);
  assert.equal(JSON.parse(fs.readFileSync(p.snapshot, 'utf8')).id, id, 'repaired');
});

test('what a caller does to a snapshot it got does not change the next one', (t) => {
  const { store, id } = setup(t);
  const a = store.snapshot(id);
  a.pending_events.push({ id: 'x' } as SessionSnapshot['pending_events'][number]);
  a.title = 'changed';
  const b = store.snapshot(id);
  assert.equal(b.pending_events.length, 0);
  assert.notEqual(b.title, 'changed');
  b.title = 'again';
  assert.notEqual(store.snapshot(id).title, 'again');
});

test('the cache keeps at most its bound, dropping the least recently used', () => {
  const c = new FoldCache(2);
  const snap = (id: string) => ({ id }) as unknown as SessionSnapshot;
  c.set('a', 's1', snap('a'), true);
  c.set('b', 's1', snap('b'), true);
  assert.ok(c.get('a', 's1'), 'a used: b is now the oldest');
  c.set('c', 's1', snap('c'), true);
  assert.equal(c.get('b', 's1'), null);
  assert.ok(c.get('a', 's1'));
  assert.ok(c.get('c', 's1'));
  assert.equal(c.get('a', 's2'), null, 'another stamp is a miss');
});

test('a hand-written delay read without being saved is pinned at the due time those reads saw, not refolded later', async (t) => {
  const h = tempHome(t);
  const deps = testDeps();
  const store = new SessionStore(h.home, deps);
  const id = createSession(store, { agent: 'demo' }).id;
  const p = store.paths(id);
  fs.appendFileSync(p.wakeQueue, '{"delay_seconds":60,"reason":"by hand"}\n');
  const seen = store.snapshot(id, { persist: false }).pending_wakes[0]!;
  assert.equal(seen.provisional, true);
  await deps.clock.advance(5_000);
  assert.equal(store.snapshot(id, { persist: false }).pending_wakes[0]!.due_at, seen.due_at, 'the same journals read the same');
  const pinned = store.snapshot(id, { pin: true }).pending_wakes[0]!;
  assert.equal(pinned.provisional, false);
  assert.equal(pinned.due_at, seen.due_at, 'pinned as the daemon planned it');
});
