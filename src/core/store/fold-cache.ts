/**
 * Folded snapshots kept in memory, by session, for as long as the journals
 * they were folded from are unchanged. A run reads its session's snapshot a
 * score of times, and a parent's runtime/relations.json reads every child's;
 * most of those reads find the journals as the last read left them. A hit
 * costs an open and fstat of each journal, a stat of session.json and a
 * copy, where a fold reads, parses and validates session.json and reads
 * both journals' tails.
 *
 * Contracts:
 * - A journal's stamp is taken before the fold reads it. A line appended
 *   while the fold reads changes the stamp, so the next read folds again: a
 *   hit can never miss a line that was in the file when its stamp was taken.
 * - A journal is unchanged when its device, inode, size, mtime and ctime are.
 *   Every append changes the size, a replacement (temp + rename) the inode,
 *   and ctime cannot be set back by anyone. The journals live outside the
 *   sandbox: the agent cannot touch them. Each journal is opened to be
 *   stat'ed, as a fold would open it: on a network file system the open
 *   revalidates what the client caches of the file (close-to-open), which a
 *   plain stat may not do for up to a minute.
 * - session.json's own identity is part of the key too, taken after the
 *   fold wrote it: a session.json removed, damaged or replaced by hand is
 *   read (and rebuilt) again, as without the cache.
 * - Entries are private copies and every hit returns a copy (a fold mutates
 *   the snapshot it continues).
 * - At most `max` entries; the least recently used goes first.
 */
import fs from 'node:fs';
import type { SessionPaths } from '../foundation/home.js';
import type { SessionSnapshot } from '../schema/index.js';
import { openIfExists } from './jsonl.js';

/** How many sessions' folds one process keeps (a daemon's concurrent runs and a parent's children fit). */
export const FOLD_CACHE_SESSIONS = 256;

const identity = (st: fs.Stats | undefined): string => (st ? `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}` : '-');

/** fstat of the file opened for reading; undefined when it does not exist. */
function openedStat(file: string): fs.Stats | undefined {
  const f = openIfExists(file);
  if (f === null) return undefined;
  fs.closeSync(f.fd);
  return f.stat;
}

/** The identity of both journals as they are now; null when the session's log does not exist. */
export function journalStamp(p: Pick<SessionPaths, 'events' | 'wakeQueue'>): string | null {
  const e = openedStat(p.events);
  if (!e) return null;
  return `${identity(e)}|${identity(openedStat(p.wakeQueue))}`;
}

/** The identity of session.json as it is now ('-' when there is none). */
export function fileStamp(file: string): string {
  return identity(fs.statSync(file, { throwIfNoEntry: false }));
}

interface Entry {
  /** journalStamp() taken before the fold, and fileStamp() of session.json after it. */
  stamp: string;
  snap: SessionSnapshot;
  /** Whether session.json holds this fold's cursors (or could not, and need not, be written). */
  saved: boolean;
}

export class FoldCache {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly max = FOLD_CACHE_SESSIONS) {}

  /** A copy of the fold kept for exactly this stamp, or null. */
  get(sessionId: string, stamp: string): { snap: SessionSnapshot; saved: boolean } | null {
    const e = this.entries.get(sessionId);
    if (!e || e.stamp !== stamp) return null;
    // Most recently used last.
    this.entries.delete(sessionId);
    this.entries.set(sessionId, e);
    return { snap: structuredClone(e.snap), saved: e.saved };
  }

  /**
   * Keeps `snap`, the fold of the journals as `stamp` describes them. It
   * becomes the cache's own: the caller goes on with a copy (one copy per
   * read, hit or miss).
   */
  set(sessionId: string, stamp: string, snap: SessionSnapshot, saved: boolean): void {
    this.entries.delete(sessionId);
    this.entries.set(sessionId, { stamp, snap, saved });
    while (this.entries.size > this.max) {
      const oldest = this.entries.keys().next().value as string;
      this.entries.delete(oldest);
    }
  }

}
