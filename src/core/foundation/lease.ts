/**
 * The run lease: one wake per session at a time, across processes (SPEC
 * invariant 4). proper-lockfile makes `sessions/<id>/lease.lock` with
 * mkdir (atomic) and refreshes its mtime every `stale / 5`; a holder that died
 * stops refreshing and its lease goes stale after `stale` ms (10 s), when
 * another process may take it over.
 *
 * If the refresh fails or finds the lease taken over (the event loop was
 * blocked past `stale`), proper-lockfile calls onCompromised; its default
 * throws from a timer and would crash the daemon. We turn it into an abort of
 * the run holding the lease.
 *
 * `lease.json` beside it says who holds it (pid, host, run); it is advisory:
 * the lock directory decides.
 *
 * On a home shared between hosts (`shared`), staleness is not judged by
 * comparing the lock's mtime with this host's clock, as proper-lockfile
 * does: the mtime is written by the holder's clock (or the file server's),
 * and a few seconds of skew would break a live lease. Instead a lock is
 * stale once this process has seen its mtime stay unchanged for `stale` ms
 * of its own monotonic clock (observedStale): only durations measured here
 * count, so no clock of another host matters. The first look at a lock
 * starts the watch; the caller is told when to look again (retryAfterMs).
 * The file system's attribute cache must be shorter than `stale` minus the
 * refresh period (docs/daemon.md, "Several hosts on one home").
 */
import fs from 'node:fs';
import os from 'node:os';
import * as z from 'zod';
import type { SessionPaths } from './home.js';
import { OpenboaError, busy } from './errors.js';
import { writeJsonAtomic } from '../store/atomic-file.js';
import { observedStale } from './lease-observation.js';
import { removeTomb } from './lock-tomb.js';
import { readStateFile } from './state-file.js';
import { BOOT_ID, LEASE_STALE_MS, PID_NS, SELF_START, ownerIsDead, properLockfile } from './lease-check.js';

export { observedStale } from './lease-observation.js';
export { LEASE_STALE_MS, leaseHeld, ownerIsDead, processStart } from './lease-check.js';

/**
 * proper-lockfile's `stale` on a shared home: never reached, so it breaks no lock by comparing clocks. (It is
 * also how long a holder whose refreshes fail with an error other than ENOENT goes on retrying them: on a
 * shared home the holder cannot write its log either then.)
 */
const SHARED_NEVER_STALE_MS = 2 ** 30;

export const LeaseOwner = z.object({
  pid: z.number().int(),
  host: z.string(),
  purpose: z.string(),
  wake_id: z.string().nullable(),
  acquired_at: z.string(),
  /** Wall-clock ms when the lock was made (not the injectable clock); informative. */
  locked_ms: z.number().optional(),
  /**
   * The lock directory this record describes: its inode and birth time
   * (sub-millisecond), as the holder saw them right after making it. A record
   * describes the lock on disk only when both are equal: a newer lock made
   * after this one was broken has another birth time even if the inode is
   * reused, so a stale record is never read as the new lock's.
   */
  lock_ino: z.number().optional(),
  lock_birth_ms: z.number().optional(),
  /** This boot of this machine, and the holder's PID namespace: only with both equal is its pid ours to judge. */
  boot_id: z.string().optional(),
  pid_ns: z.string().optional(),
  /** The holder's start time (clock ticks since boot, /proc/<pid>/stat): a reused pid has another. */
  pid_start: z.number().optional(),
});
export type LeaseOwner = z.infer<typeof LeaseOwner>;

/** What a lock needs: the directory it guards, the lock directory, and the advisory owner file. */
export type LockPaths = Pick<SessionPaths, 'dir' | 'lease' | 'leaseOwner'>;

export interface Lease {
  readonly signal: AbortSignal;
  /** Set when the lease was lost while held; the holder must stop writing. */
  readonly compromised: Error | null;
  release(): Promise<void>;
}

export interface AcquireOptions {
  purpose: string;
  wakeId?: string | null;
  nowIso: string;
  staleMs?: number;
  /** What the lock guards, for the busy message (default: the session). */
  what?: string;
  /** How long a lock with no owner record must stand unrefreshed before it counts as abandoned (tests). */
  unrecordedGraceMs?: number;
  /** The home is shared between hosts: staleness is observed, never judged against this host's clock (see the module comment). */
  shared?: boolean;
}

/** Takes the session's lease or throws `busy` at once (no waiting). */
export async function acquireLease(p: LockPaths, opts: AcquireOptions): Promise<Lease> {
  if (opts.shared) return acquireShared(p, opts);
  const grace = opts.unrecordedGraceMs ?? UNRECORDED_GRACE_MS;
  try {
    return await lockOnce(p, opts);
  } catch (e) {
    if ((e as { code?: string }).code !== 'busy') throw e;
    if (breakAbandoned(p, grace)) return lockOnce(p, opts);
    // A lock no record describes yet is either being made (its record follows at once) or was
    // left by a maker that died: either way the answer is known after the grace, not after 10 s.
    const idle = unrecordedIdle(p);
    if (idle !== null && OpenboaError.is(e)) e.retryAfterMs = Math.max(0, grace - idle) + 50;
    throw e;
  }
}

/**
 * acquireLease on a shared home. A dead holder of this machine (same boot,
 * same PID namespace, recorded for this very lock) is still broken at once;
 * a lock with no record is given no early grace (its age would be judged
 * against another host's clock); anything else is broken once observedStale
 * says so.
 */
async function acquireShared(p: LockPaths, opts: AcquireOptions): Promise<Lease> {
  const staleMs = opts.staleMs ?? LEASE_STALE_MS;
  try {
    return await lockOnce(p, opts);
  } catch (e) {
    if ((e as { code?: string }).code !== 'busy') throw e;
    if (breakAbandoned(p, Infinity)) return lockOnce(p, opts);
    const wait = observedStale(p, staleMs);
    if (wait === 0) return lockOnce(p, opts);
    if (OpenboaError.is(e)) e.retryAfterMs = wait + 50;
    throw e;
  }
}


/** The identity of a lock directory: inode and birth time; null when gone or the file system keeps no birth time. */
function lockIdentity(dir: string): { ino: number; birth: number; mtimeMs: number } | null {
  try {
    const st = fs.statSync(dir);
    return st.birthtimeMs ? { ino: st.ino, birth: st.birthtimeMs, mtimeMs: st.mtimeMs } : null;
  } catch {
    return null;
  }
}

/** Whether `owner` is the record of exactly this lock directory (see LeaseOwner.lock_ino). */
function describes(owner: LeaseOwner | null, id: { ino: number; birth: number }): owner is LeaseOwner {
  return owner !== null && owner.lock_ino === id.ino && owner.lock_birth_ms === id.birth;
}

/** How long the lock has gone without a refresh when no owner record describes it (ms), else null. */
function unrecordedIdle(p: LockPaths): number | null {
  const id = lockIdentity(p.lease);
  if (!id || describes(readLeaseOwner(p), id)) return null;
  return Math.max(0, Date.now() - id.mtimeMs);
}

/**
 * A holder writes its owner record right after making the lock; one that
 * died in between leaves a lock no record describes. Such a lock is
 * abandoned once it has gone this long without a refresh: a live holder
 * refreshes every stale/5 = 2 s, record or not (its record may be missing
 * because writing it failed, because a releasing or breaking process removed
 * it in the instant between its check and its removal, or because it was
 * written by a version without lock identity), so 6 s without a refresh is
 * a live holder only if its event loop stalled for 4 s.
 */
const UNRECORDED_GRACE_MS = 6000;

/**
 * A lease whose holder died on this machine need not wait to go stale. It is
 * broken at once only when all of this holds: lease.json was written for this
 * very lock directory (its inode and birth time match), by a process of this boot of
 * this machine and of our PID namespace (so its pid means what it says here),
 * and that pid no longer exists. The lock is taken away by renaming it to a
 * tombstone, and the tombstone is checked to be the one judged dead, so two
 * breakers cannot remove a lock a third just made. Anything uncertain (another
 * host or container, a live or reused pid, no birth times) falls back to
 * proper-lockfile's staleness.
 */
function breakAbandoned(p: LockPaths, unrecordedGraceMs: number): boolean {
  const id = lockIdentity(p.lease);
  if (!id) return false;
  const owner = readLeaseOwner(p);
  if (describes(owner, id)) {
    if (!ownerIsDead(owner)) return false;
  } else if (Date.now() - id.mtimeMs < unrecordedGraceMs) {
    // No record of this lock's holder: abandoned only once it has gone the grace without a refresh.
    return false;
  }
  const tomb = `${p.lease}.dead-${process.pid}-${Date.now()}`;
  try {
    fs.renameSync(p.lease, tomb);
  } catch {
    return false; // gone or taken meanwhile
  }
  const moved = lockIdentity(tomb);
  if (!moved || moved.ino !== id.ino || moved.birth !== id.birth) {
    // We took a fresh lock that replaced the dead one in between: give it back.
    try {
      fs.renameSync(tomb, p.lease);
    } catch {
      // its owner will notice (onCompromised) and stop
    }
    return false;
  }
  // Never recursively: a lock is an empty directory, and one that is not is left in place (lock-tomb.ts).
  removeTomb(tomb);
  try {
    // Only the dead lock's own record: a new holder may have written its own meanwhile.
    if (describes(readLeaseOwner(p), id)) fs.rmSync(p.leaseOwner, { force: true });
  } catch {
    // the lock is ours to take either way; leftovers are harmless (a record no lock matches is ignored)
  }
  return true;
}

/** This process as an owner record: pid, host, and what tells whether it still lives (boot, PID namespace, start time). */
export function selfOwner(purpose: string, nowIso: string, wakeId: string | null = null): LeaseOwner {
  return {
    pid: process.pid,
    host: os.hostname(),
    purpose,
    wake_id: wakeId,
    acquired_at: nowIso,
    ...(BOOT_ID ? { boot_id: BOOT_ID } : {}),
    ...(PID_NS ? { pid_ns: PID_NS } : {}),
    ...(SELF_START !== null ? { pid_start: SELF_START } : {}),
  };
}

async function lockOnce(p: LockPaths, opts: AcquireOptions): Promise<Lease> {
  const controller = new AbortController();
  let compromised: Error | null = null;
  let releaseLock: () => void;
  const lf = await properLockfile();
  try {
    // The synchronous API: the same lock (mkdir, mtime probe, refresh timer), without a trip through the
    // thread pool per step. Each such trip waits for the event loop to come round, and in a busy daemon
    // that is behind every other run's work: taking and giving back a lease cost tens of milliseconds of
    // waiting for well under one of file system work (docs/benchmarks.md, delegation).
    releaseLock = lf.lockSync(p.dir, {
      lockfilePath: p.lease,
      realpath: false,
      // On a shared home proper-lockfile never breaks a lock by its clock (observedStale does, by watching).
      stale: opts.shared ? SHARED_NEVER_STALE_MS : (opts.staleMs ?? LEASE_STALE_MS),
      // Refreshed every stale/5 (2 s), not proper-lockfile's stale/2: a live lock whose record was lost (see
      // UNRECORDED_GRACE_MS) must show a refresh well inside the grace even when the event loop stalls.
      update: Math.max(1000, Math.floor((opts.staleMs ?? LEASE_STALE_MS) / 5)),
      retries: 0,
      onCompromised: (err: Error) => {
        compromised = err;
        controller.abort(new Error(`lease on ${p.dir} lost: ${err.message}`));
      },
    });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ELOCKED') {
      const owner = readLeaseOwner(p);
      const who = owner ? ` by pid ${owner.pid} on ${owner.host} (${owner.purpose}${owner.wake_id ? ` ${owner.wake_id}` : ''}) since ${owner.acquired_at}` : '';
      throw busy(`${opts.what ?? `session ${p.dir.split('/').pop()}`} is busy: its lease is held${who}`);
    }
    throw e;
  }
  const mine = lockIdentity(p.lease);
  const owner: LeaseOwner = {
    ...selfOwner(opts.purpose, opts.nowIso, opts.wakeId ?? null),
    locked_ms: Date.now(),
    ...(mine ? { lock_ino: mine.ino, lock_birth_ms: mine.birth } : {}),
  };
  try {
    writeJsonAtomic(p.leaseOwner, owner, { durable: false });
  } catch {
    // advisory only
  }
  let released = false;
  return {
    signal: controller.signal,
    get compromised() {
      return compromised;
    },
    async release() {
      if (released) return;
      released = true;
      // The lock first, then our record: a kill in between leaves a record and no lock (harmless),
      // never a lock no record describes (which the next holder must wait out).
      // Only our own lock directory: if this holder could not refresh it in time (its event loop stalled past
      // `stale`) and another took it over before the refresh noticed, the directory there now is the new
      // holder's, and removing it would let a third in beside them. (Where the file system keeps no birth
      // times, as before: proper-lockfile's release.) A lock left in place is noticed by the refresh, which
      // then reports it compromised, harmlessly: this run is over.
      const now = mine ? lockIdentity(p.lease) : null;
      if (!compromised && (!mine || (now !== null && now.ino === mine.ino && now.birth === mine.birth))) {
        try {
          releaseLock();
        } catch {
          // already released or taken over: nothing of ours to give back
        }
      }
      try {
        // Only our own record: the next holder may have written its own already. (What remains of
        // this check-then-remove race costs at most an advisory record: a lock no record describes
        // is judged by its refreshes, and a live holder refreshes.)
        const cur = readLeaseOwner(p);
        if (cur && cur.pid === owner.pid && cur.acquired_at === owner.acquired_at && cur.lock_ino === owner.lock_ino && cur.lock_birth_ms === owner.lock_birth_ms) fs.rmSync(p.leaseOwner, { force: true });
      } catch {
        // advisory only
      }
    },
  };
}

/** The lock's owner record; null when there is none, or what stands there is not one (see state-file.ts). Never throws. */
export function readLeaseOwner(p: LockPaths): LeaseOwner | null {
  const f = readStateFile(p.leaseOwner);
  if (!f) return null;
  try {
    const r = LeaseOwner.safeParse(JSON.parse(f.text));
    return r.success ? r.data : null;
  } catch {
    return null;
  }
}
