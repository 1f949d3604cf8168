/**
 * Whether a daemon runs on a home, on any host: the one answer `send`,
 * `wake`, `chat`, `status` and `doctor` give (docs/daemon.md).
 *
 * Two records say so. The home's daemon lock (`.openboa/daemon.lock`, with
 * `daemon.json`), which a daemon started without --allow-multiple holds;
 * and a heartbeat every daemon writes, lock or not:
 * `.openboa/daemons/<host>-<pid>.json` (an owner record, as a lease's, with
 * the time of the beat), replaced whole (temp + rename) every
 * DAEMON_BEAT_MS and removed when the daemon stops. A heartbeat counts as a
 * live daemon unless its process is provably gone (same host, boot and PID
 * namespace, and its pid dead or reused), or the file went unrewritten for
 * the lease's stale time, judged by the file's mtime (the file system's
 * clock, as `openboa doctor` compares it with this host's) against this
 * host's clock: a daemon on another host cannot be asked by pid.
 *
 * Loads no zod (lease-check.ts, state-file.ts): a one-shot `openboa send`
 * asks this for its notes. The records are the daemons' own, in `.openboa/`
 * where no agent reaches; each is read through readStateFile (a FIFO, a
 * symlink or a file over 64 KiB there is no record, and never blocks or
 * floods the reader), and one is read as a holder when it is an object with
 * a numeric pid (ownerIsDead judges the rest), anything else as no record.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Home } from './home.js';
import type { LeaseOwner, LockPaths } from './lease.js';
import { LEASE_STALE_MS, leaseHeld, ownerIsDead } from './lease-check.js';
import { readStateFile } from './state-file.js';

/** The home's daemon lock (daemon/home-lock.ts takes it). */
export function homeLockPaths(home: Home): LockPaths {
  const dir = path.join(home.root, '.openboa');
  return { dir, lease: path.join(dir, 'daemon.lock'), leaseOwner: path.join(dir, 'daemon.json') };
}

export const beatsDir = (home: Home) => path.join(home.root, '.openboa', 'daemons');

/** A running daemon as its record says: who (pid, host) and since when. */
export type DaemonPresence = LeaseOwner;

/** The live heartbeats of the home (see the module comment). Never throws. */
export function beatingDaemons(home: Home, nowMs = Date.now(), staleMs = LEASE_STALE_MS): DaemonPresence[] {
  let names: string[];
  try {
    names = fs.readdirSync(beatsDir(home)).filter((n) => n.endsWith('.json'));
  } catch {
    return [];
  }
  const out: DaemonPresence[] = [];
  for (const n of names) {
    // Gone meanwhile, or not a record: not a live daemon's. Its age is its mtime as read through the same descriptor.
    const f = readStateFile(path.join(beatsDir(home), n));
    if (!f || nowMs - f.stat.mtimeMs > staleMs) continue;
    const owner = ownerRecord(f.text);
    if (owner && !ownerIsDead(owner)) out.push(owner);
  }
  return out;
}

/**
 * A daemon running on this home, on any host: the holder of the home's lock
 * (while held, not stale, and not provably dead), else the first live
 * heartbeat; null when there is none. Never throws.
 */
export async function runningDaemon(home: Home): Promise<DaemonPresence | null> {
  const p = homeLockPaths(home);
  try {
    if (await leaseHeld(p)) {
      const owner = readOwner(p.leaseOwner);
      if (!owner) return { pid: 0, host: '', purpose: 'daemon', wake_id: null, acquired_at: '' };
      if (!ownerIsDead(owner)) return owner;
    }
  } catch {
    // judged by the heartbeats alone
  }
  return beatingDaemons(home)[0] ?? null;
}

/** A daemon's owner record from its text: an object with a numeric pid, else null. */
function ownerRecord(text: string): DaemonPresence | null {
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === 'object' && v !== null && typeof (v as { pid?: unknown }).pid === 'number' ? (v as DaemonPresence) : null;
  } catch {
    return null;
  }
}

function readOwner(file: string): DaemonPresence | null {
  const f = readStateFile(file);
  return f ? ownerRecord(f.text) : null;
}
