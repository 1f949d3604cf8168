/**
 * A broken lock is removed with one rmdir, never recursively (lock-tomb.ts):
 * a lock proper-lockfile made is an empty directory, and one with anything
 * in it was filled by someone who can still swap what is inside for a
 * symlink while a recursive removal walks it by path. Such a lock is taken
 * away all the same, left under its tombstone name and reported.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { acquireLease, observedStale } from '../../src/core/foundation/lease.js';
import { LOCK_LEFTOVER } from '../../src/core/foundation/lock-tomb.js';
import { tempHome } from '../helpers/home.js';

function lockPaths(root: string) {
  const dir = path.join(root, 'guarded');
  fs.mkdirSync(dir, { recursive: true });
  return { dir, lease: path.join(dir, 'x.lock'), leaseOwner: path.join(dir, 'x.json') };
}

/** A lock someone filled: a subfolder with a file in it. */
function filledLock(p: { lease: string }): void {
  fs.mkdirSync(path.join(p.lease, 'a'), { recursive: true });
  fs.writeFileSync(path.join(p.lease, 'a', 'keep'), 'not the daemon\'s to delete');
}

/** The process warnings with code LOCK_LEFTOVER emitted until the end of the test (they are emitted on a later tick). */
function leftoverWarnings(t: { after(fn: () => void): void }): string[] {
  const got: string[] = [];
  const on = (w: Error & { code?: string }) => {
    if (w.code === LOCK_LEFTOVER) got.push(w.message);
  };
  process.on('warning', on);
  t.after(() => process.off('warning', on));
  return got;
}

const tick = () => new Promise((r) => setImmediate(r));

/** The tombstones beside the lock whose names start with `prefix`, and whether each still holds a/keep. */
function tombs(p: { dir: string }, prefix: string): Array<{ name: string; kept: boolean }> {
  return fs
    .readdirSync(p.dir)
    .filter((n) => n.startsWith(prefix))
    .map((name) => ({ name, kept: fs.existsSync(path.join(p.dir, name, 'a', 'keep')) }));
}

test('an abandoned lock with content is taken over, but its content is left in the tombstone and reported', async (t) => {
  const p = lockPaths(tempHome(t, { bundled: false }).root);
  const warnings = leftoverWarnings(t);
  filledLock(p);
  if (!fs.statSync(p.lease).birthtimeMs) return t.skip('this file system records no birth time');
  // No owner record describes it: abandoned at once with no grace.
  const lease = await acquireLease(p, { purpose: 'test', nowIso: new Date().toISOString(), unrecordedGraceMs: 0 });
  await lease.release();
  const left = tombs(p, 'x.lock.dead-');
  assert.deepEqual(left.map((x) => x.kept), [true], `the file is still inside the one tombstone: ${JSON.stringify(left)}`);
  await tick();
  assert.equal(warnings.length, 1, 'the leftover is reported once');
  assert.match(warnings[0] as string, /x\.lock\.dead-.*holds entries/);
});

test('on a shared home a lock observed stale with content is taken away, its content left in the tombstone and reported', async (t) => {
  const p = lockPaths(tempHome(t, { bundled: false }).root);
  const warnings = leftoverWarnings(t);
  filledLock(p);
  assert.equal(observedStale(p, 10_000, 0), 10_000); // first look
  assert.equal(observedStale(p, 10_000, 10_100), 0); // unchanged 10.1 s: broken
  assert.equal(fs.existsSync(p.lease), false, 'the lock is taken away');
  const left = tombs(p, 'x.lock.stale-');
  assert.deepEqual(left.map((x) => x.kept), [true], `the file is still inside the one tombstone: ${JSON.stringify(left)}`);
  await tick();
  assert.equal(warnings.length, 1);
  assert.match(warnings[0] as string, /x\.lock\.stale-.*holds entries/);
  // An empty lock goes without a trace, as before.
  fs.mkdirSync(p.lease);
  assert.equal(observedStale(p, 10_000, 20_000), 10_000);
  assert.equal(observedStale(p, 10_000, 30_100), 0);
  assert.equal(tombs(p, 'x.lock.stale-').length, 1, 'only the filled one is left');
  await tick();
  assert.equal(warnings.length, 1);
});
