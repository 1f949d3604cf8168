/**
 * Looking at a lease without taking it (lease.ts takes them): whether a
 * live lock is held, and whether the holder a lock's record names died on
 * this machine. Apart from lease.ts so that a command that only looks (the
 * note of a one-shot `openboa send` on whether a daemon runs) loads neither
 * zod (the owner record's schema) nor, when there is no lock at all,
 * proper-lockfile.
 */
import fs from 'node:fs';
import os from 'node:os';
import type { LockPaths } from './lease.js';

/** A dead holder's lease is taken over after this long without a refresh. */
export const LEASE_STALE_MS = 10_000;

/**
 * proper-lockfile, loaded on first use: it brings graceful-fs (which patches
 * fs) and signal-exit, which a command that never takes or checks a lease
 * need not load.
 */
let loaded: typeof import('proper-lockfile') | null = null;
export async function properLockfile(): Promise<typeof import('proper-lockfile')> {
  // Kept once loaded: import() again would go through the module loader's promises each time.
  return (loaded ??= (await import('proper-lockfile')).default);
}

/** Whether a live (non-stale) lease is held on the session, by anyone. */
export async function leaseHeld(p: LockPaths, staleMs = LEASE_STALE_MS): Promise<boolean> {
  // No lock file is no lease (what proper-lockfile's check answers too), without loading it: the common case
  // of `openboa send` on a home where no daemon runs. A lease taken just after this is as if taken after the answer.
  if (!fs.existsSync(p.lease)) return false;
  try {
    return await (await properLockfile()).check(p.dir, { lockfilePath: p.lease, realpath: false, stale: staleMs });
  } catch {
    return false;
  }
}

function readOr(fn: () => string): string | undefined {
  try {
    return fn().trim();
  } catch {
    return undefined;
  }
}
/** This boot of this machine, and this process's PID namespace (a recorded pid means what it says here only with both equal). */
export const BOOT_ID = readOr(() => fs.readFileSync('/proc/sys/kernel/random/boot_id', 'utf8'));
export const PID_NS = readOr(() => fs.readlinkSync('/proc/self/ns/pid'));

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** A process's start time in clock ticks since boot (field 22 of /proc/<pid>/stat), or null. */
export function processStart(pid: number | 'self'): number | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const v = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]);
    return Number.isFinite(v) ? v : null;
  } catch {
    return null;
  }
}
export const SELF_START = processStart('self');

/**
 * The fields of a lock's owner record (lease.ts, LeaseOwner) that say
 * whether its holder died. Typed loosely: a record read without its schema
 * may be judged too (see ownerIsDead).
 */
export interface HolderFields {
  host?: unknown;
  boot_id?: unknown;
  pid_ns?: unknown;
  pid?: unknown;
  pid_start?: unknown;
}

/** Whether the recorded holder still runs: its pid exists and, when recorded, started when it did (pids are reused). */
function holderAlive(owner: HolderFields): boolean {
  if (typeof owner.pid !== 'number' || !pidAlive(owner.pid)) return false;
  if (owner.pid_start === undefined) return true;
  const start = processStart(owner.pid);
  return start === null || start === owner.pid_start;
}

/**
 * Whether the owner recorded for a lock is a process of this machine that
 * no longer exists. Never throws. Given a record that was not checked
 * against LeaseOwner, false means false whatever the schema would say of
 * it; true counts only for a record that passes the schema.
 */
export function ownerIsDead(owner: HolderFields): boolean {
  return owner.host === os.hostname() && !!BOOT_ID && !!PID_NS && owner.boot_id === BOOT_ID && owner.pid_ns === PID_NS && !holderAlive(owner);
}
