/**
 * Writing into a session's `inbox/` (inbox.ts drains it): the way in for a
 * person's events on a home shared between hosts (shared-home.ts), where an
 * append from one host may overwrite what a run on another appends. The
 * lines go to a hidden temp file inside inbox/ (ignored by the drain), are
 * synced when `durable`, and the file is renamed in under a new name: it
 * appears whole or not at all, on NFS too.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { SessionPaths } from '../foundation/home.js';
import { fsyncDir } from './atomic-file.js';

/** Drops `lines` (JSON objects, one a line) into the session's inbox/ as one file; returns its name. */
export function dropInInbox(p: Pick<SessionPaths, 'inbox'>, lines: readonly string[], durable: boolean): string {
  // inbox/ is made on first use (a session is created without it).
  const made = fs.mkdirSync(p.inbox, { recursive: true }) !== undefined;
  const rand = randomBytes(8).toString('hex');
  // Names sort by time of writing: the drain takes files in name order.
  const name = `${Date.now().toString().padStart(15, '0')}-${rand}.jsonl`;
  const tmp = path.join(p.inbox, `.drop-${rand}.tmp`);
  const fd = fs.openSync(tmp, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW, 0o644);
  try {
    fs.writeFileSync(fd, `${lines.join('\n')}\n`);
    if (durable) fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  try {
    fs.renameSync(tmp, path.join(p.inbox, name));
  } catch (e) {
    fs.rmSync(tmp, { force: true });
    throw e;
  }
  if (durable) {
    fsyncDir(p.inbox);
    // A power loss must not take back an inbox/ this drop made, with the file in it.
    if (made) fsyncDir(path.dirname(p.inbox));
  }
  return name;
}
