/**
 * Taking a session's lease so that what the taker reads next is what the
 * last holder wrote.
 *
 * On one host the page cache is shared by every process, so the lease
 * alone orders the writers. On a home shared between hosts it is not: a
 * network file system's client caches a file's attributes (sshfs for its
 * `dcache_timeout`, NFS for `actimeo` between opens), and a reader sizes
 * its read by them (jsonl.ts reads up to fstat's size). A host that takes
 * the lease a moment after another host gave it back would fold the log
 * and the wake queue as they were before that holder's last run: it would
 * take in again the messages that run took, and fire again the revisits it
 * consumed (seen over sshfs: a revisit run twice, 450 ms apart, by two
 * hosts).
 *
 * So on a shared home the taker has each journal's attributes fetched
 * again before it reads, in two ways, since clients differ in what makes
 * them ask:
 * - `fchown(fd, -1, -1)`: a change of nothing, which a FUSE client (sshfs)
 *   still sends to the server as a SETATTR whose reply carries the file's
 *   current attributes; they replace the cached ones. It writes no value,
 *   so no stale cached mode or time is written back (a chmod to the cached
 *   mode would undo another host's chmod);
 * - a read of the last byte the cache knows of, which a FUSE client sends
 *   to the server when its page cache does not hold that page, taking the
 *   file's size from the answer. (A read at or past the cached end does
 *   not: the kernel answers it from the cached size.)
 * Measured over sshfs (kernel 6.18, tests/multihost/lease-handover.test.ts
 * and with `-o kernel_cache`): each alone made the taker see the last
 * holder's lines; with neither it took in a message again and fired a
 * revisit again. An NFS client asks at each open already (close-to-open).
 * Once fetched, the cache stays right for the lease's length: only the
 * holder writes the journals (lines from other hosts go through inbox/,
 * which the holder moves in itself).
 */
import fs from 'node:fs';
import { acquireLease, type AcquireOptions, type Lease } from '../foundation/lease.js';
import type { SessionPaths } from '../foundation/home.js';

export type SessionLeaseOptions = Omit<AcquireOptions, 'shared' | 'what'>;

/**
 * acquireLease for a session (`shared`: the store's judgement of the home),
 * then, on a shared home, the journals' cached attributes refreshed
 * (refreshJournals). Throws what acquireLease throws.
 */
export async function takeSessionLease(p: SessionPaths, shared: boolean, opts: SessionLeaseOptions): Promise<Lease> {
  const lease = await acquireLease(p, { ...opts, shared });
  if (shared) refreshJournals(p);
  return lease;
}

/** The attributes this client caches for the session's two journals, fetched again from the file server. */
export function refreshJournals(p: Pick<SessionPaths, 'events' | 'wakeQueue'>): void {
  refreshAttributes(p.events);
  refreshAttributes(p.wakeQueue);
}

/**
 * Makes this client's cached attributes (above all the size) of `file` the
 * server's (see the module comment). A missing file is left so; a failure
 * is ignored: the read that follows is no worse than without this.
 */
export function refreshAttributes(file: string): void {
  let fd: number;
  try {
    // Never blocks (a FIFO put in a journal's place) and never follows a link.
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
  } catch {
    return;
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) return;
    try {
      fs.fchownSync(fd, -1, -1);
    } catch {
      // refused or not supported: the read below still asks
    }
    if (st.size > 0) fs.readSync(fd, Buffer.alloc(1), 0, 1, st.size - 1);
  } catch {
    // as before: the read that follows sees what the cache shows
  } finally {
    fs.closeSync(fd);
  }
}
