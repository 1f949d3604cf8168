/**
 * The heartbeat a daemon writes so that any process, on any host, can tell
 * it runs (core/foundation/daemon-presence.ts reads them).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Home } from '../core/foundation/home.js';
import { beatsDir } from '../core/foundation/daemon-presence.js';
import { selfOwner } from '../core/foundation/lease.js';
import { writeJsonAtomic } from '../core/store/atomic-file.js';

/** How often a daemon rewrites its heartbeat: the lease's refresh period, well inside the stale time. */
export const DAEMON_BEAT_MS = 2000;

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
