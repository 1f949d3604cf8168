/**
 * One daemon per home. Two daemons on one home are safe (each run takes the
 * session's lease) but wasteful and confusing, so a daemon takes the home's
 * lock when it starts, and a second one is refused with who holds it, unless
 * it was started with --allow-multiple (several hosts sharing one home).
 *
 * The lock is the same mechanism as a session's lease (src/core/foundation/lease.ts):
 * `<home>/.openboa/daemon.lock/` made by mkdir and refreshed while the daemon
 * lives, and `<home>/.openboa/daemon.json` saying who holds it (pid, host,
 * since). A daemon that was killed leaves both behind; its lock is taken over
 * at once when its pid is provably dead on this machine, or after 10 s of no
 * refresh otherwise. So a stale pid file never blocks a start.
 */
import fs from 'node:fs';
import type { Home } from '../core/foundation/home.js';
import type { Clock } from '../core/foundation/clock.js';
import { acquireLease, leaseHeld, ownerIsDead, readLeaseOwner, type Lease, type LeaseOwner } from '../core/foundation/lease.js';
import { OpenboaError, busy } from '../core/foundation/errors.js';
import { homeLockPaths } from './daemon-running.js';

export { homeLockPaths } from './daemon-running.js';

/** Takes the home's daemon lock, or throws `busy` naming the daemon that holds it. */
export async function lockHome(home: Home, clock: Pick<Clock, 'now' | 'sleep'>): Promise<Lease> {
  const nowIso = new Date(clock.now()).toISOString();
  const p = homeLockPaths(home);
  fs.mkdirSync(p.dir, { recursive: true });
  try {
    try {
      return await acquireLease(p, { purpose: 'daemon', nowIso, what: 'this home' });
    } catch (e) {
      // A lock with no record yet: wait out the short grace once, then it is either described or taken over.
      if (!OpenboaError.is(e) || e.code !== 'busy' || e.retryAfterMs === undefined || e.retryAfterMs > 7000) throw e;
      await clock.sleep(e.retryAfterMs);
      return await acquireLease(p, { purpose: 'daemon', nowIso, what: 'this home' });
    }
  } catch (e) {
    if (OpenboaError.is(e) && e.code === 'busy') {
      const owner = readLeaseOwner(p);
      const who = owner ? `pid ${owner.pid}${owner.host ? ` on ${owner.host}` : ''}, since ${owner.acquired_at}` : 'its pid is not recorded';
      throw busy(`another daemon (${who}) is already running on this home (${home.root}); stop it first, or pass --allow-multiple to run several on purpose`);
    }
    throw e;
  }
}

/**
 * The daemon running on this home, as far as its lock says: its owner record
 * while the lock is held and not stale, and its pid not provably dead; else
 * null. For readers (send, status, doctor); never throws.
 */
export async function runningDaemon(home: Home): Promise<LeaseOwner | null> {
  const p = homeLockPaths(home);
  try {
    if (!(await leaseHeld(p))) return null;
    const owner = readLeaseOwner(p);
    if (owner && ownerIsDead(owner)) return null;
    return owner ?? { pid: 0, host: '', purpose: 'daemon', wake_id: null, acquired_at: '' };
  } catch {
    return null;
  }
}
