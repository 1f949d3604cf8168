/**
 * session.json as a cache file: read back only when it is whole, of this
 * session and of this code's SESSION_FORMAT; anything else reads as absent,
 * and the snapshot is then rebuilt from the journals (SPEC invariant 2).
 * Written with temp file + rename (atomic-file.ts), never fsync'd.
 */
import fs from 'node:fs';
import { SessionSnapshot, SESSION_FORMAT } from '../schema/index.js';
import { writeJsonAtomic } from './atomic-file.js';

/** The cached snapshot, or null when it is missing, unreadable, another session's or of another format. */
export function readSnapshotFile(file: string, sessionId: string): SessionSnapshot | null {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return null;
  }
  try {
    const r = SessionSnapshot.safeParse(JSON.parse(text));
    if (!r.success || r.data.id !== sessionId || r.data.format !== SESSION_FORMAT) return null;
    return r.data;
  } catch {
    return null;
  }
}

/**
 * Writes the snapshot when its cursors moved past `before` (the cached
 * file's; null: there was none). A cache: no fsync (after a power loss it may
 * be empty or old, and is rebuilt), and a failure to write is ignored (a
 * read-only home still reads correctly).
 */
export function writeSnapshotFileIfMoved(file: string, snap: SessionSnapshot, before: SessionSnapshot['journals'] | null): void {
  if (before && sameCursors(before, snap.journals)) return;
  try {
    writeJsonAtomic(file, snap, { durable: false });
  } catch {
    // see above
  }
}

/** Whether two folds stopped at the same place in both journals. */
export function sameCursors(x: SessionSnapshot['journals'], y: SessionSnapshot['journals']): boolean {
  return x.events.offset === y.events.offset && x.events.ino === y.events.ino && x.wake_queue.offset === y.wake_queue.offset && x.wake_queue.ino === y.wake_queue.ino;
}
