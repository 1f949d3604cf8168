/** What a kill -9 can leave behind: an orphaned sandbox, a lock with no owner record, a lock whose pid was reused. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { reapOrphanSandboxes } from '../../src/daemon/reap.js';
import { acquireLease } from '../../src/core/foundation/lease.js';
import { tempHome } from '../helpers/home.js';

const ppidOf = (pid: number): number | null => {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return rest[0] === 'Z' ? null : Number(rest[1]);
  } catch {
    return null;
  }
};

let orphans = 0;

/**
 * Starts a process whose parent exits at once, in `cwd`: an orphan. As the
 * runtime's shell (`bash --noprofile --norc --noediting`), or as anything
 * else; the leader of its session, or not (its leader gone).
 */
function orphan(cwd: string, asShell = true, leader = true): number {
  // The shell reads a FIFO that never opens for writing, so it waits forever; each orphan has its own.
  const fifo = `.hold-${process.pid}-${++orphans}`;
  const shell = `bash --noprofile --norc --noediting -c "read x < ${fifo}"`;
  const cmd = !asShell
    ? 'setsid sleep 300 >/dev/null 2>&1 < /dev/null & echo $!'
    : leader
      ? `mkfifo ${fifo}; setsid ${shell} >/dev/null 2>&1 < /dev/null & echo $!`
      : // Not its session's leader, and the leader gone: the shape of a sandbox's PID-namespace init whose bwrap died first.
        `mkfifo ${fifo}; setsid bash -c '(exec ${shell}) >/dev/null 2>&1 < /dev/null & echo $!; exit 0' < /dev/null`;
  const r = spawnSync('bash', ['-c', cmd], { cwd, encoding: 'utf8' });
  return Number(r.stdout.trim());
}

test('an orphaned sandbox of this home is reaped at start; others are left alone', async (t) => {
  const h = tempHome(t, { bundled: false });
  const ws = path.join(h.home.sessionsDir, '01a20000-0000-7000-8000-000000000001', 'workspace');
  fs.mkdirSync(ws, { recursive: true });
  const elsewhere = fs.mkdtempSync(path.join(os.tmpdir(), 'openboa-not-a-session-'));
  const mine = orphan(ws);
  const other = orphan(elsewhere);
  const notAShell = orphan(ws, false); // a person's own process in a workspace: left alone
  const inner = orphan(ws, true, false);
  t.after(() => {
    for (const p of [mine, other, notAShell, inner]) {
      try {
        process.kill(p, 'SIGKILL');
      } catch {
        // gone
      }
    }
    fs.rmSync(elsewhere, { recursive: true, force: true });
  });
  // The orphan runs `setsid`, which then execs bash (its argv starts with setsid until it has): look only once it has (bounded; a loaded machine may take a moment).
  const isShell = (pid: number, leads: boolean) => {
    try {
      const sid = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[3];
      return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').startsWith('bash\0--noprofile\0--norc\0--noediting\0') && (sid === String(pid)) === leads && ppidOf(pid) === 1;
    } catch {
      return false;
    }
  };
  const isShellNow = () => isShell(mine, true) && isShell(inner, false);
  // Another process's progress: polled, with a bound far above what a loaded machine needs (it returns as soon as it holds).
  for (let i = 0; i < 3000 && !isShellNow(); i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(isShellNow(), 'the orphan became the shell');
  if (ppidOf(mine) !== 1) return t.skip('this machine hands orphans to a subreaper, not to init');
  const describe = (pid: number) => {
    try {
      return `${fs.readFileSync(`/proc/${pid}/stat`, 'utf8').trim()} cwd=${fs.readlinkSync(`/proc/${pid}/cwd`)} argv=${fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ')}`;
    } catch (e) {
      return String(e);
    }
  };
  const state = describe(mine);
  assert.equal(reapOrphanSandboxes(h.home.sessionsDir), 2, `the orphans as the reaper saw them: ${state}, ${describe(inner)}; now: ${describe(mine)}; sessions: ${h.home.sessionsDir}`);
  // The kill is delivered and init reaps the orphan on its own time: polled, bounded, as above.
  for (let i = 0; i < 3000 && (ppidOf(mine) !== null || ppidOf(inner) !== null); i++) await new Promise((r) => setTimeout(r, 10));
  assert.equal(ppidOf(mine), null, 'the orphan in a session workspace is gone');
  assert.equal(ppidOf(inner), null, 'the orphan whose session leader is gone (a sandbox\'s namespace init) is gone too');
  assert.equal(ppidOf(other), 1, 'a process elsewhere is left alone');
  assert.equal(ppidOf(notAShell), 1, 'a process that is not the runtime shell is left alone, even in a workspace');
});

test('an orphan whose session leader is gone takes only its own descendants with it, not other processes of that session id', async (t) => {
  const h = tempHome(t, { bundled: false });
  const ws = path.join(h.home.sessionsDir, '01a20000-0000-7000-8000-000000000002', 'workspace');
  fs.mkdirSync(ws, { recursive: true });
  const elsewhere = fs.mkdtempSync(path.join(os.tmpdir(), 'openboa-not-a-session-'));
  const fifo = path.join(ws, `.hold-${process.pid}-${++orphans}`);
  // One dead leader, two orphans in its session: the runtime's shell in a workspace, and a process that is not
  // below it (a dead leader's pid reused by someone else's session leader, which died too, leaves its members the same sid).
  const r = spawnSync('bash', ['-c', `mkfifo ${fifo}; setsid bash -c '(exec bash --noprofile --norc --noediting -c "read x < ${fifo}") >/dev/null 2>&1 < /dev/null & echo $!; (cd ${elsewhere} && exec sleep 300) >/dev/null 2>&1 < /dev/null & echo $!; exit 0' < /dev/null`], { cwd: ws, encoding: 'utf8' });
  const [inner, bystander] = r.stdout.trim().split('\n').map(Number) as [number, number];
  t.after(() => {
    for (const p of [inner, bystander]) {
      try {
        process.kill(p, 'SIGKILL');
      } catch {
        // gone
      }
    }
    fs.rmSync(elsewhere, { recursive: true, force: true });
  });
  const ready = () => {
    try {
      return fs.readFileSync(`/proc/${inner}/cmdline`, 'utf8').startsWith('bash\0--noprofile\0') && ppidOf(inner) === 1 && ppidOf(bystander) === 1;
    } catch {
      return false;
    }
  };
  // Another process's progress: polled, with a bound far above what a loaded machine needs.
  for (let i = 0; i < 3000 && !ready(); i++) await new Promise((res) => setTimeout(res, 10));
  if (!ready() && ppidOf(inner) !== null && ppidOf(inner) !== 1) return t.skip('this machine hands orphans to a subreaper, not to init');
  assert.ok(ready(), 'both orphans are there');
  assert.equal(reapOrphanSandboxes(h.home.sessionsDir), 1);
  for (let i = 0; i < 3000 && ppidOf(inner) !== null; i++) await new Promise((res) => setTimeout(res, 10));
  assert.equal(ppidOf(inner), null, 'the orphaned shell is reaped');
  assert.equal(ppidOf(bystander), 1, 'a process of the same session id that is not below it is left alone');
});

test('a lock with no owner record (its maker died right after mkdir) is taken over, not waited on', async (t) => {
  const h = tempHome(t, { bundled: false });
  const dir = path.join(h.root, 'guarded');
  const paths = { dir, lease: path.join(dir, 'x.lock'), leaseOwner: path.join(dir, 'x.json') };
  fs.mkdirSync(paths.lease, { recursive: true });
  const lease = await acquireLease(paths, { purpose: 'test', nowIso: new Date().toISOString(), unrecordedGraceMs: 0 });
  await lease.release();
  // with the real grace, a fresh unrecorded lock may still be its maker's: busy, and it says when to look again
  fs.mkdirSync(paths.lease);
  await assert.rejects(acquireLease(paths, { purpose: 'test', nowIso: new Date().toISOString() }), (e: unknown) => {
    const err = e as { code?: string; retryAfterMs?: number };
    assert.equal(err.code, 'busy');
    assert.ok(err.retryAfterMs !== undefined && err.retryAfterMs > 0 && err.retryAfterMs <= 6050, `retryAfterMs ${err.retryAfterMs}`);
    return true;
  });
});

test('a lock whose recorded pid now belongs to another process (reused) is taken over', async (t) => {
  const h = tempHome(t, { bundled: false });
  const dir = path.join(h.root, 'guarded');
  const paths = { dir, lease: path.join(dir, 'x.lock'), leaseOwner: path.join(dir, 'x.json') };
  fs.mkdirSync(paths.lease, { recursive: true });
  const st = fs.statSync(paths.lease);
  const born = st.birthtimeMs;
  if (!born) return t.skip('this file system records no birth time');
  // our own pid is alive, but it did not start at tick 1: the pid was reused
  fs.writeFileSync(
    paths.leaseOwner,
    JSON.stringify({
      pid: process.pid,
      host: os.hostname(),
      purpose: 'daemon',
      wake_id: null,
      acquired_at: new Date().toISOString(),
      locked_ms: born,
      lock_ino: st.ino,
      lock_birth_ms: born,
      boot_id: fs.readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim(),
      pid_ns: fs.readlinkSync('/proc/self/ns/pid'),
      pid_start: 1,
    }),
  );
  const lease = await acquireLease(paths, { purpose: 'test', nowIso: new Date().toISOString() });
  await lease.release();
});

test("a dead holder's record does not describe a newer lock made in its place, even within the same second", async (t) => {
  const h = tempHome(t, { bundled: false });
  const dir = path.join(h.root, 'guarded');
  const paths = { dir, lease: path.join(dir, 'x.lock'), leaseOwner: path.join(dir, 'x.json') };
  fs.mkdirSync(paths.lease, { recursive: true });
  const old = fs.statSync(paths.lease);
  if (!old.birthtimeMs) return t.skip('this file system records no birth time');
  // The dead holder's record, for the lock it made...
  const dead = { pid: 2 ** 22 + 1, host: os.hostname(), purpose: 'daemon', wake_id: null, acquired_at: new Date().toISOString(), locked_ms: old.birthtimeMs, lock_ino: old.ino, lock_birth_ms: old.birthtimeMs, boot_id: fs.readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim(), pid_ns: fs.readlinkSync('/proc/self/ns/pid') };
  fs.writeFileSync(paths.leaseOwner, JSON.stringify(dead));
  // ...but that lock was broken, and a live holder has made a new one and not yet written its record.
  fs.rmdirSync(paths.lease);
  fs.mkdirSync(paths.lease);
  await assert.rejects(acquireLease(paths, { purpose: 'test', nowIso: new Date().toISOString() }), (e: unknown) => (e as { code?: string }).code === 'busy');
  assert.ok(fs.existsSync(paths.lease), 'the new lock stands');
  // The same record, for the lock it describes, is broken at once: its pid is gone.
  fs.rmdirSync(paths.lease);
  fs.mkdirSync(paths.lease);
  const now = fs.statSync(paths.lease);
  fs.writeFileSync(paths.leaseOwner, JSON.stringify({ ...dead, lock_ino: now.ino, lock_birth_ms: now.birthtimeMs }));
  const lease = await acquireLease(paths, { purpose: 'test', nowIso: new Date().toISOString() });
  await lease.release();
});

test('a holder releasing a lease another took over meanwhile (its refresh had stalled) leaves the new holder\'s lock standing', async (t) => {
  const h = tempHome(t, { bundled: false });
  const dir = path.join(h.root, 'guarded');
  const paths = { dir, lease: path.join(dir, 'x.lock'), leaseOwner: path.join(dir, 'x.json') };
  fs.mkdirSync(dir, { recursive: true });
  const lease = await acquireLease(paths, { purpose: 'test', nowIso: new Date().toISOString() });
  if (!fs.statSync(paths.lease).birthtimeMs) {
    await lease.release();
    return t.skip('this file system records no birth time');
  }
  // Taken over as stale by another process before this holder's refresh ran: its lock directory replaces ours.
  fs.rmdirSync(paths.lease);
  fs.mkdirSync(paths.lease);
  const theirs = fs.statSync(paths.lease);
  await lease.release();
  const after = fs.statSync(paths.lease, { throwIfNoEntry: false });
  assert.ok(after, 'the new holder keeps its lock');
  assert.equal(after.ino, theirs.ino);
  // Our own lock, not taken over, is released as always.
  fs.rmdirSync(paths.lease);
  const again = await acquireLease(paths, { purpose: 'test', nowIso: new Date().toISOString() });
  await again.release();
  assert.equal(fs.existsSync(paths.lease), false);
});
