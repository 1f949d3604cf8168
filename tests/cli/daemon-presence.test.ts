/**
 * "Is a daemon running on this home" sees any daemon of the home, on any
 * host: the home's lock, or a daemon's heartbeat in .openboa/daemons/
 * (core/foundation/daemon-presence.ts), which send, status and doctor all
 * ask. A heartbeat counts until it is older than the lease's stale time,
 * or its process is provably gone on this host.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { beatingDaemons, runningDaemon } from '../../src/core/foundation/daemon-presence.js';
import { LEASE_STALE_MS, selfOwner } from '../../src/core/foundation/lease.js';
import { tempHome } from '../helpers/home.js';
import { cli } from '../helpers/cli.js';
import { spawnDaemon } from '../helpers/daemon-process.js';

test('a heartbeat from another host counts until it is stale; one of a dead process here does not', async (t) => {
  const h = tempHome(t, { bundled: false });
  const dir = path.join(h.root, '.openboa', 'daemons');
  fs.mkdirSync(dir, { recursive: true });
  const now = Date.now();
  const write = (name: string, rec: Record<string, unknown>, ageMs: number) => {
    fs.writeFileSync(path.join(dir, name), JSON.stringify(rec));
    fs.utimesSync(path.join(dir, name), (now - ageMs) / 1000, (now - ageMs) / 1000);
  };
  assert.equal(await runningDaemon(h.home), null);
  // This host, this boot and namespace, a pid that is not running: provably gone, however fresh.
  const { pid_start: _start, ...self } = selfOwner('daemon', new Date(now).toISOString());
  write('here-dead.json', { ...self, pid: 2 ** 22 + 17 }, 0);
  assert.equal(await runningDaemon(h.home), null);
  // Another host: its pid cannot be asked; its beat is judged by age.
  const other = { pid: 4242, host: 'host-b', purpose: 'daemon', wake_id: null, acquired_at: new Date(now).toISOString(), boot_id: 'another-boot' };
  write('host-b-4242.json', other, LEASE_STALE_MS + 1000);
  assert.deepEqual(beatingDaemons(h.home, now), [], 'a beat older than the stale time');
  write('host-b-4242.json', other, 1000);
  assert.equal((await runningDaemon(h.home))?.host, 'host-b');
});

test('send, status and doctor see a daemon started with --allow-multiple', async (t) => {
  const h = tempHome(t);
  const created = await cli(['session', 'create', '--agent', 'demo'], { home: h.root });
  assert.equal(created.code, 0, created.stderr);
  const id = created.stdout.trim();
  const d = spawnDaemon(t, h.root, {}, ['--allow-multiple']);
  await d.line((l) => l.kind === 'daemon_started');
  const sent = await cli(['send', id, 'hello'], { home: h.root });
  assert.equal(sent.code, 0, sent.stderr);
  assert.doesNotMatch(sent.stderr, /no daemon is running/);
  const status = await cli(['status', id], { home: h.root });
  assert.match(status.stdout, /^daemon {5}running \(pid \d+/m);
  const doctor = await cli(['doctor', '--json'], { home: h.root });
  const check = (JSON.parse(doctor.stdout) as { checks: Array<{ name: string; status: string }> }).checks.find((c) => c.name === 'daemon');
  assert.equal(check?.status, 'ok');
  // Stopped: its heartbeat goes with it.
  await d.term();
  assert.match((await cli(['send', id, 'again'], { home: h.root })).stderr, /no daemon is running/);
});
