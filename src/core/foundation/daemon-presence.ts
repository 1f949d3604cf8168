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
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Home } from './home.js';
import { LEASE_STALE_MS, leaseHeld, LeaseOwner, ownerIsDead, readLeaseOwner, selfOwner, type LockPaths } from './lease.js';
import { writeJsonAtomic } from '../store/atomic-file.js';

/** How often a daemon rewrites its heartbeat: the lease's refresh period, well inside the stale time. */
export const DAEMON_BEAT_MS = 2000;

/** The home's daemon lock (daemon/home-lock.ts takes it). */
export function homeLockPaths(home: Home): LockPaths {
  const dir = path.join(home.root, '.openboa');
  return { dir, lease: path.join(dir, 'daemon.lock'), leaseOwner: path.join(dir, 'daemon.json') };
}

const beatsDir = (home: Home) => path.join(home.root, '.openboa', 'daemons');

/** A running daemon as its record says: who (pid, host) and since when. */
export type DaemonPresence = LeaseOwner;

/**
 * The heartbeat of this process's daemon: written at once, then every
 * DAEMON_BEAT_MS on real time (another host reads it by the file's mtime);
 * the returned function stops it and removes the file. Never throws: a beat
 * that cannot be written is tried again at the next one.
 */
export function startDaemonBeat(home: Home, nowIso: () => string): () => void {
  const file = path.join(beatsDir(home), `${os.hostname()}-${process.pid}.json`);
  const since = nowIso();
  const beat = () => {
    try {
      fs.mkdirSync(path.dirname(file), { recursive: true });
      writeJsonAtomic(file, { ...selfOwner('daemon', since), beat_at: nowIso() }, { durable: false });
    } catch {
      // the next beat tries again; a reader meanwhile sees the last one age
    }
  };
  beat();
  const timer = setInterval(beat, DAEMON_BEAT_MS);
  timer.unref();
  return () => {
    clearInterval(timer);
    fs.rmSync(file, { force: true });
  };
}

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
    const file = path.join(beatsDir(home), n);
    try {
      const st = fs.statSync(file);
      if (nowMs - st.mtimeMs > staleMs) continue;
      const r = LeaseOwner.safeParse(JSON.parse(fs.readFileSync(file, 'utf8')));
      if (r.success && !ownerIsDead(r.data)) out.push(r.data);
    } catch {
      // gone meanwhile, or half a record: not a live daemon's
    }
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
      const owner = readLeaseOwner(p);
      if (!owner) return { pid: 0, host: '', purpose: 'daemon', wake_id: null, acquired_at: '' };
      if (!ownerIsDead(owner)) return owner;
    }
  } catch {
    // judged by the heartbeats alone
  }
  return beatingDaemons(home)[0] ?? null;
}
