/**
 * Whether a daemon runs on a home, as its lock says (home-lock.ts takes the
 * lock): for the notes of the commands that append (`send`, `outcome`).
 * Read without the owner record's schema wherever the schema cannot change
 * the answer, so a one-shot `openboa send` loads no zod for it.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Home } from '../core/foundation/home.js';
import type { LockPaths } from '../core/foundation/lease.js';
import { leaseHeld, ownerIsDead } from '../core/foundation/lease-check.js';

export function homeLockPaths(home: Home): LockPaths {
  const dir = path.join(home.root, '.openboa');
  return { dir, lease: path.join(dir, 'daemon.lock'), leaseOwner: path.join(dir, 'daemon.json') };
}

/**
 * runningDaemon(home) !== null, answered the same: a live lock whose owner
 * record is not a LeaseOwner that died on this machine. Only a record that
 * reads as dead is checked against the schema (runningDaemon); any other
 * record, valid or not, means a daemon runs. Never throws.
 */
export async function daemonRunning(home: Home): Promise<boolean> {
  const p = homeLockPaths(home);
  if (!(await leaseHeld(p))) return false;
  let record: unknown;
  try {
    record = JSON.parse(fs.readFileSync(p.leaseOwner, 'utf8'));
  } catch {
    return true;
  }
  if (typeof record !== 'object' || record === null || !ownerIsDead(record)) return true;
  return (await (await import('./home-lock.js')).runningDaemon(home)) !== null;
}
