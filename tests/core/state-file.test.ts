/**
 * The owner records and heartbeats the lease and daemon-presence code reads
 * (core/foundation/state-file.ts): whoever can write their folder can put a
 * FIFO, a symlink or a huge file at their name. Reading one must return
 * (as no record) instead of blocking the process or reading without end.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { readLeaseOwner, selfOwner } from '../../src/core/foundation/lease.js';
import { beatingDaemons } from '../../src/core/foundation/daemon-presence.js';
import { readStateFile, STATE_FILE_MAX_BYTES } from '../../src/core/foundation/state-file.js';
import { tempHome } from '../helpers/home.js';
import { runInChild, source } from '../helpers/in-child.js';

test('a FIFO in place of lease.json, daemon.json or a heartbeat reads as no record, without blocking', (t) => {
  const h = tempHome(t, { bundled: false });
  const session = path.join(h.root, 'sessions', 'x');
  const openboa = path.join(h.root, '.openboa');
  fs.mkdirSync(session, { recursive: true });
  fs.mkdirSync(path.join(openboa, 'daemons'), { recursive: true });
  // A held home lock, so that runningDaemon goes on to read its record: its mtime an hour ahead, so that it
  // is not stale however slowly the child starts.
  fs.mkdirSync(path.join(openboa, 'daemon.lock'));
  const ahead = new Date(Date.now() + 3_600_000);
  fs.utimesSync(path.join(openboa, 'daemon.lock'), ahead, ahead);
  for (const f of [path.join(session, 'lease.json'), path.join(openboa, 'daemon.json'), path.join(openboa, 'daemons', 'h-1.json')]) execFileSync('mkfifo', [f]);
  // Each call in a child: one that blocks on the FIFO would block this process too, for good.
  const r = runInChild(`
    import { readLeaseOwner } from ${source('src/core/foundation/lease.ts')};
    import { beatingDaemons, runningDaemon } from ${source('src/core/foundation/daemon-presence.ts')};
    import { Home } from ${source('src/core/foundation/home.ts')};
    const home = new Home(${JSON.stringify(h.root)});
    const dir = ${JSON.stringify(session)};
    console.log(JSON.stringify({
      owner: readLeaseOwner({ dir, lease: dir + '/lease.lock', leaseOwner: dir + '/lease.json' }),
      beats: beatingDaemons(home),
      running: await runningDaemon(home),
    }));
  `);
  assert.equal(r.timedOut, false, 'the reads returned instead of blocking on a FIFO');
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), { owner: null, beats: [], running: { pid: 0, host: '', purpose: 'daemon', wake_id: null, acquired_at: '' } });
});

test('a symlink (to a real record or to /dev/zero) or an oversized file in place of a record is no record', (t) => {
  const h = tempHome(t, { bundled: false });
  const dir = path.join(h.root, 'guarded');
  fs.mkdirSync(dir);
  const p = { dir, lease: path.join(dir, 'x.lock'), leaseOwner: path.join(dir, 'x.json') };
  const record = JSON.stringify(selfOwner('test', new Date().toISOString()));
  fs.writeFileSync(p.leaseOwner, record);
  assert.equal(readLeaseOwner(p)?.pid, process.pid, 'a record in a regular file is read');
  const real = path.join(h.root, 'real.json');
  fs.renameSync(p.leaseOwner, real);
  fs.symlinkSync(real, p.leaseOwner);
  assert.equal(readLeaseOwner(p), null, 'not through a symlink');
  fs.writeFileSync(real, record + ' '.repeat(STATE_FILE_MAX_BYTES));
  assert.equal(readStateFile(real), null, 'not past the bound');
  const beats = path.join(h.root, '.openboa', 'daemons');
  fs.mkdirSync(beats, { recursive: true });
  fs.symlinkSync('/dev/zero', path.join(beats, 'h-2.json'));
  assert.deepEqual(beatingDaemons(h.home), []);
});

test("the shell's saved state (runtime/shell.json) is not read through a FIFO or a symlink", (t) => {
  const h = tempHome(t, { bundled: false });
  const rt = path.join(h.root, 'runtime');
  fs.mkdirSync(rt);
  const elsewhere = path.join(h.root, 'elsewhere.json');
  fs.writeFileSync(elsewhere, JSON.stringify({ cwd: '/workspace/sub', alive: true, last_exit_code: 0, commands: 1, isolation: 'bwrap', updated_at: new Date().toISOString() }));
  fs.symlinkSync(elsewhere, path.join(rt, 'shell.json'));
  const viaLink = runInChild(`
    import { readShellState } from ${source('src/core/sandbox/shell-session.ts')};
    console.log(JSON.stringify(readShellState(${JSON.stringify(rt)})));
  `);
  assert.equal(viaLink.stdout.trim(), 'null', viaLink.stderr);
  fs.unlinkSync(path.join(rt, 'shell.json'));
  execFileSync('mkfifo', [path.join(rt, 'shell.json')]);
  const r = runInChild(`
    import { readShellState } from ${source('src/core/sandbox/shell-session.ts')};
    console.log(JSON.stringify(readShellState(${JSON.stringify(rt)})));
  `);
  assert.equal(r.timedOut, false, 'readShellState blocked on the FIFO');
  assert.equal(r.stdout.trim(), 'null', r.stderr);
});
