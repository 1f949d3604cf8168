/**
 * `openboa doctor` on a home several hosts share (docs/daemon.md, "Several
 * hosts on one home"): what that needs of the file system, tried for real.
 *
 * - lock: a lease taken, refused to a second taker, released (mkdir, the
 *   refresh's utimes, rmdir), as the runs do;
 * - clock: this host's clock against the timestamps the file system gives
 *   a file written now (the file server's clock, or the mount's);
 * - watch: whether fs.watch sees a file written here; it never sees other
 *   hosts' writes on a network file system, which is why `--poll`.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Home } from '../../core/foundation/home.js';
import { acquireLease } from '../../core/foundation/lease.js';
import { fileSystemType, homeIsShared } from '../../core/store/shared-home.js';

export interface Check {
  name: string;
  status: 'ok' | 'info' | 'warn' | 'fail';
  message: string;
}

/** Beyond this, created_at and due times written by different hosts disagree visibly (leases do not care). */
const CLOCK_WARN_MS = 2000;
/** How long a watch is given to report a file written beside it. */
const WATCH_WAIT_MS = 1000;

export async function checkSharedHome(home: Home, now: () => number = Date.now): Promise<Check[]> {
  const type = fileSystemType(home.root) ?? 'unknown';
  if (!homeIsShared(home)) return [{ name: 'shared home', status: 'info', message: `on ${type}, used by one host (set shared: true in openboa.yaml if other hosts mount it)` }];
  const dir = path.join(home.root, '.openboa', `doctor-${process.pid}`);
  try {
    fs.mkdirSync(dir, { recursive: true });
  } catch (e) {
    return [{ name: 'shared lock', status: 'fail', message: `cannot make ${dir}: ${(e as Error).message}` }];
  }
  try {
    return [await lockRoundTrip(dir, type), clockOffset(dir, now), await watchSees(dir)];
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function lockRoundTrip(dir: string, type: string): Promise<Check> {
  const p = { dir, lease: path.join(dir, 'lock'), leaseOwner: path.join(dir, 'owner.json') };
  const nowIso = new Date().toISOString();
  try {
    const lease = await acquireLease(p, { purpose: 'doctor', nowIso, shared: true });
    let refused = false;
    try {
      await acquireLease(p, { purpose: 'doctor', nowIso, shared: true });
    } catch (e) {
      refused = (e as { code?: string }).code === 'busy';
    }
    await lease.release();
    if (!refused) return { name: 'shared lock', status: 'fail', message: `a second lease on ${type} was not refused: mkdir is not exclusive here` };
    if (fs.existsSync(p.lease)) return { name: 'shared lock', status: 'fail', message: 'a released lease left its lock behind' };
    return { name: 'shared lock', status: 'ok', message: `a lease was taken, refused to a second taker and released on ${type}` };
  } catch (e) {
    return { name: 'shared lock', status: 'fail', message: `no lease can be taken on ${type}: ${(e as Error).message}` };
  }
}

function clockOffset(dir: string, now: () => number): Check {
  const file = path.join(dir, 'clock');
  const before = now();
  fs.writeFileSync(file, '');
  const after = now();
  const mtime = fs.statSync(file).mtimeMs;
  // The file system may keep whole seconds: the written time can be up to 1 s below the true one.
  const offset = mtime < before ? Math.min(0, mtime + 1000 - before) : Math.max(0, mtime - after);
  const text = `the file system's clock is ${Math.abs(Math.round(offset))} ms ${offset > 0 ? 'ahead of' : 'behind'} this host's`;
  if (Math.abs(offset) > CLOCK_WARN_MS) return { name: 'shared clock', status: 'warn', message: `${text}: run NTP on every host (leases do not depend on it; times in the logs and due revisits do)` };
  return { name: 'shared clock', status: 'ok', message: text };
}

async function watchSees(dir: string): Promise<Check> {
  const seen = await new Promise<boolean>((resolve) => {
    let w: fs.FSWatcher;
    try {
      w = fs.watch(dir, () => done(true));
    } catch {
      return resolve(false);
    }
    const timer = setTimeout(() => done(false), WATCH_WAIT_MS);
    function done(v: boolean) {
      clearTimeout(timer);
      w.close();
      resolve(v);
    }
    fs.writeFileSync(path.join(dir, 'watched'), 'x');
  });
  return seen
    ? { name: 'shared watch', status: 'info', message: "inotify sees this host's writes here, not other hosts': run the daemon with --poll" }
    : { name: 'shared watch', status: 'warn', message: "inotify does not see writes here: run the daemon with --poll (otherwise only the sweep finds work)" };
}
