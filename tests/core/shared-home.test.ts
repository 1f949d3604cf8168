/**
 * A home shared between hosts (store/shared-home.ts): how it is recognised,
 * and that a person's events then go through inbox/ (a rename) and reach
 * the log exactly once, by the run that holds the lease.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileSystemType, homeIsShared, isNetworkFileSystem } from '../../src/core/store/shared-home.js';
import { SessionStore } from '../../src/core/store/session-store.js';
import { sendMessage, interruptSession } from '../../src/core/ops/session-ops.js';
import { deleteSession } from '../../src/core/ops/session-lifecycle.js';
import { HomeConfig } from '../../src/core/schema/index.js';
import { unitRun } from '../helpers/unit-run.js';
import { tempHome } from '../helpers/home.js';

const MOUNTINFO = [
  '22 1 0:21 / / rw,relatime - ext4 /dev/sda1 rw',
  '40 22 0:50 / /srv/homes rw,relatime - nfs4 fs:/export rw',
  '41 40 0:51 / /srv/homes/local rw - tmpfs tmpfs rw',
  '42 22 0:52 / /mnt/with\\040space rw,nosuid - fuse.sshfs root@h:/x rw',
].join('\n');

test('the file system of a path is the longest mount point above it; network types are shared', (t) => {
  const h = tempHome(t, { bundled: false });
  const info = path.join(h.root, 'mountinfo');
  // fileSystemType takes the real path: only existing paths can be judged, so map the mounts onto the temp root.
  const text = MOUNTINFO.replaceAll(' /srv', ` ${h.root}/srv`).replaceAll(' /mnt', ` ${h.root}/mnt`);
  fs.writeFileSync(info, text);
  for (const d of ['srv/homes/a', 'srv/homes/local/b', 'mnt/with space/c', 'elsewhere']) fs.mkdirSync(path.join(h.root, d), { recursive: true });
  assert.equal(fileSystemType(path.join(h.root, 'srv/homes/a'), info), 'nfs4');
  assert.equal(fileSystemType(path.join(h.root, 'srv/homes/local/b'), info), 'tmpfs');
  assert.equal(fileSystemType(path.join(h.root, 'mnt/with space/c'), info), 'fuse.sshfs');
  assert.equal(fileSystemType(path.join(h.root, 'elsewhere'), info), 'ext4');
  assert.equal(fileSystemType(path.join(h.root, 'missing'), info), null);
  assert.ok(isNetworkFileSystem('nfs4') && isNetworkFileSystem('fuse.sshfs') && isNetworkFileSystem('ceph'));
  assert.ok(!isNetworkFileSystem('ext4') && !isNetworkFileSystem('tmpfs') && !isNetworkFileSystem(null));
});

test("openboa.yaml's shared: decides over the file system, and is a valid key of the home's settings", (t) => {
  const h = tempHome(t, { bundled: false });
  assert.equal(homeIsShared(h.home), false); // a temp dir on a local file system
  h.write('openboa.yaml', 'webhooks: []\nshared: true  # three hosts\n');
  assert.equal(homeIsShared(h.home), true);
  assert.equal(HomeConfig.parse({ shared: true }).shared, true);
  h.write('openboa.yaml', 'shared: false\n');
  assert.equal(homeIsShared(h.home), false);
});

test('on a shared home a message and an interrupt go through inbox/ and the run takes each in once', async (t) => {
  const u = unitRun(t, { replies: [{ text: 'answered' }] });
  const id = u.newSession();
  const shared = new SessionStore(u.h.home, u.deps, { shared: true });
  const logBefore = fs.readFileSync(u.store.paths(id).events, 'utf8');
  const msg = sendMessage(shared, id, 'from host B');
  // Nothing appended: one file renamed into inbox/, holding the event as it will be in the log.
  assert.equal(fs.readFileSync(u.store.paths(id).events, 'utf8'), logBefore);
  const files = fs.readdirSync(u.store.paths(id).inbox).filter((n) => !n.startsWith('.'));
  assert.equal(files.length, 1);
  assert.equal(JSON.parse(fs.readFileSync(path.join(u.store.paths(id).inbox, files[0]!), 'utf8')).id, msg.id);
  const r = await u.run(id);
  assert.equal(r.outcome, 'executed');
  assert.deepEqual(r.processed_event_ids, [msg.id]);
  assert.equal(u.events(id).filter((e) => e.id === msg.id).length, 1);
  assert.equal((await u.run(id)).outcome, 'skipped');
  assert.equal(u.events(id).filter((e) => e.id === msg.id).length, 1);
  // An interrupt goes the same way (taken in by the session's next run).
  const stop = interruptSession(shared, id, 'enough');
  assert.equal(u.events(id).some((e) => e.id === stop.id), false);
  await u.run(id);
  assert.equal(u.events(id).filter((e) => e.id === stop.id).length, 1);
});

test('an unshared home appends at once, as before', (t) => {
  const u = unitRun(t);
  const id = u.newSession();
  const m = sendMessage(new SessionStore(u.h.home, u.deps, { shared: false }), id, 'local');
  assert.ok(u.events(id).some((e) => e.id === m.id));
});

test("on a shared home a delete refuses a lease another host may still hold, whatever this host's clock says of it", async (t) => {
  const u = unitRun(t);
  const id = u.newSession();
  const p = u.store.paths(id);
  // A live run on a host whose clock is a minute behind: its refreshes write mtimes a minute old by ours.
  fs.mkdirSync(p.lease);
  const behind = new Date(Date.now() - 60_000);
  fs.utimesSync(p.lease, behind, behind);
  const shared = new SessionStore(u.h.home, u.deps, { shared: true });
  await assert.rejects(deleteSession(shared, id, new Date().toISOString()), (e: unknown) => (e as { code?: string }).code === 'busy');
  assert.ok(fs.existsSync(p.events), 'the session is still there');
  assert.ok(fs.existsSync(p.lease), 'its lease stands');
});
