/**
 * A small state file another process writes whole (temp + rename), read
 * without trusting what stands at its name: a lock's owner record
 * (`lease.json`, `.openboa/daemon.json`) and a daemon's heartbeat
 * (`.openboa/daemons/*.json`). Whoever can write the folder can put anything
 * there, and these reads run on the daemon's one thread (a lease attempt,
 * an HTTP request with a run token) and in a one-shot `openboa send`.
 *
 * So the file is opened once, with O_NONBLOCK (a FIFO opened for reading
 * would block until a writer came, and the whole process with it) and
 * O_NOFOLLOW (these files are never symlinks: one to /dev/zero would be
 * read until memory ran out); it counts only if fstat of that same
 * descriptor says it is a regular file; and what is read is bounded by
 * readAtMost, not by the size fstat saw. Loads no zod (daemon-presence.ts
 * reads through it on the lean send path).
 */
import fs from 'node:fs';
import { READ_FLAGS, closeQuietly, readAtMost } from '../sandbox/beneath.js';

/** These records are a few hundred bytes; a file longer than this is not one of them. */
export const STATE_FILE_MAX_BYTES = 64 * 1024;

export interface StateFile {
  text: string;
  /** fstat of the descriptor the text was read from. */
  stat: fs.Stats;
}

/**
 * The file's text (UTF-8) and its fstat; null when it is missing, a
 * symlink, not a regular file, longer than `maxBytes`, or unreadable.
 * Never throws.
 */
export function readStateFile(file: string, maxBytes = STATE_FILE_MAX_BYTES): StateFile | null {
  let fd: number;
  try {
    fd = fs.openSync(file, READ_FLAGS);
  } catch {
    return null;
  }
  try {
    const stat = fs.fstatSync(fd);
    if (!stat.isFile()) return null;
    const data = readAtMost(fd, maxBytes, stat.size);
    return data ? { text: data.toString('utf8'), stat } : null;
  } catch {
    return null;
  } finally {
    closeQuietly(fd);
  }
}
