/**
 * The lease across hosts (foundation/lease.ts): a lock of another host is
 * never taken over early, and on a shared home no clock of another host
 * decides staleness: only how long this process has seen the lock's mtime
 * stand still.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { acquireLease, observedStale, LEASE_STALE_MS } from '../../src/core/foundation/lease.js';
import { tempHome } from '../helpers/home.js';

function lockPaths(root: string) {
  const dir = path.join(root, 'guarded');
  fs.mkdirSync(dir, { recursive: true });
  return { dir, lease: path.join(dir, 'x.lock'), leaseOwner: path.join(dir, 'x.json') };
}
const busy = (e: unknown) => (e as { code?: string }).code === 'busy';
const nowIso = () => new Date().toISOString();

test('on a shared home a lock whose mtime a skewed clock wrote a minute back is not taken at the first look', async (t) => {
  const p = lockPaths(tempHome(t, { bundled: false }).root);
  // A live holder on a host whose clock is 60 s behind: its refreshes write mtimes a minute old by ours.
  fs.mkdirSync(p.lease);
  const behind = new Date(Date.now() - 60_000);
  fs.utimesSync(p.lease, behind, behind);
  await assert.rejects(acquireLease(p, { purpose: 'test', nowIso: nowIso(), shared: true }), (e: unknown) => {
    assert.ok(busy(e));
    const wait = (e as { retryAfterMs?: number }).retryAfterMs ?? 0;
    assert.ok(wait > LEASE_STALE_MS - 1000 && wait <= LEASE_STALE_MS + 50, `look again after the stale time, got ${wait}`);
    return true;
  });
  assert.ok(fs.existsSync(p.lease), 'the live lock stands');
  // Judged by this host's clock (an unshared home), the same lock is stale and taken: what a skew would do.
  const taken = await acquireLease(p, { purpose: 'test', nowIso: nowIso() });
  await taken.release();
});

test('observed staleness: a refresh restarts the watch; a lock left alone for the stale time is broken, once', (t) => {
  const p = lockPaths(tempHome(t, { bundled: false }).root);
  fs.mkdirSync(p.lease);
  const at = (ms: number) => fs.utimesSync(p.lease, new Date(ms), new Date(ms));
  at(1_000_000);
  assert.equal(observedStale(p, 10_000, 0), 10_000); // first look
  assert.equal(observedStale(p, 10_000, 9_000), 1_000); // unchanged 9 s: not yet
  at(1_002_000); // the holder refreshed (whatever its clock says)
  assert.equal(observedStale(p, 10_000, 9_500), 10_000);
  assert.equal(observedStale(p, 10_000, 19_000), 500);
  assert.ok(fs.existsSync(p.lease));
  assert.equal(observedStale(p, 10_000, 19_600), 0); // 10.1 s unchanged: broken
  assert.equal(fs.existsSync(p.lease), false);
  assert.deepEqual(fs.readdirSync(p.dir), [], 'no tombstone left');
  // Gone already: lock again at once.
  assert.equal(observedStale(p, 10_000, 20_000), 0);
});

test('a dead holder on another host (same boot id, another hostname) is not taken over before its lease is stale', async (t) => {
  const p = lockPaths(tempHome(t, { bundled: false }).root);
  fs.mkdirSync(p.lease);
  const st = fs.statSync(p.lease);
  if (!st.birthtimeMs) return t.skip('this file system records no birth time');
  const record = {
    pid: 2 ** 22 + 1, // no such process here
    host: `${os.hostname()}-b`,
    purpose: 'wake',
    wake_id: null,
    acquired_at: nowIso(),
    lock_ino: st.ino,
    lock_birth_ms: st.birthtimeMs,
    // Containers on one machine share its boot id: only the hostname and PID namespace tell them apart.
    boot_id: fs.readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim(),
    pid_ns: fs.readlinkSync('/proc/self/ns/pid'),
  };
  fs.writeFileSync(p.leaseOwner, JSON.stringify(record));
  for (const shared of [false, true]) await assert.rejects(acquireLease(p, { purpose: 'test', nowIso: nowIso(), shared }), busy);
  // The same record naming this host: its pid is provably gone, and the lock is taken at once.
  fs.writeFileSync(p.leaseOwner, JSON.stringify({ ...record, host: os.hostname() }));
  const lease = await acquireLease(p, { purpose: 'test', nowIso: nowIso(), shared: true });
  await lease.release();
});

test('on a shared home a lock with no record gets no early grace (its age would be read on another clock)', async (t) => {
  const p = lockPaths(tempHome(t, { bundled: false }).root);
  fs.mkdirSync(p.lease);
  const old = new Date(Date.now() - 7_000); // past the 6 s grace an unshared home gives it
  fs.utimesSync(p.lease, old, old);
  await assert.rejects(acquireLease(p, { purpose: 'test', nowIso: nowIso(), shared: true, staleMs: 60_000 }), busy);
  assert.ok(fs.existsSync(p.lease));
});
