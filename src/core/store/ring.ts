/**
 * The home's doorbell (docs/format.md, "sessions/.ring/"): on a home shared
 * between hosts, whoever delivers a person's event through a session's
 * inbox/ also makes an empty file named after the session in
 * `sessions/.ring/`, after the inbox rename. A polling daemon lists that one
 * folder every 100 ms instead of stat'ing every session that often
 * (daemon/ring-reader.ts), looks at each session named there and removes the
 * entry.
 *
 * Contracts:
 * - The entry is made after the event is in inbox/, so a daemon that removes
 *   an entry and then looks at the session sees every event rung before the
 *   removal (the mount's cache aside: docs/daemon.md).
 * - One name per session: ringing a session already rung changes nothing;
 *   the folder holds at most one entry per session.
 * - A hint, never the truth: ring() never throws. An entry that could not be
 *   made (the folder is not a real directory, the disk is full) costs only
 *   latency: the daemon's full polling round finds the inbox/ file anyway.
 * - The folder is opened without following a symlink, and the entry made
 *   inside that open folder without following one either: a `.ring` a
 *   person replaced by a symlink or a file is refused, never written through.
 */
import fs from 'node:fs';
import path from 'node:path';
import { at, closeQuietly, DIR_FLAGS } from '../sandbox/beneath.js';

/** The doorbell's folder, inside sessions/ (a name starting with "." is no session: session-dirs.ts). */
export const RING_DIR = '.ring';

const ENTRY_FLAGS = fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK | fs.constants.O_NOCTTY;

/** Rings for `sessionId` (see the module comment). Returns whether the entry is there. */
export function ring(sessionsDir: string, sessionId: string): boolean {
  const dir = path.join(sessionsDir, RING_DIR);
  let dirFd: number | null = null;
  let fd: number | null = null;
  try {
    try {
      fs.mkdirSync(dir);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    dirFd = fs.openSync(dir, DIR_FLAGS);
    fd = fs.openSync(at(dirFd, sessionId), ENTRY_FLAGS, 0o644);
    return true;
  } catch {
    return false;
  } finally {
    closeQuietly(fd);
    closeQuietly(dirFd);
  }
}
