/**
 * A person's write to a session's wake queue from outside a run (`openboa
 * schedule`, `schedule --cancel`, the library's scheduleRevisit).
 *
 * On one host it is an append, as any line a person writes. On a home shared
 * between hosts an append is not atomic between them (an NFS client appends
 * at the size it last saw), and a run on another host appends to the same
 * queue (the revisits it consumes, schedules and cancels). So there the
 * write is made under the session's lease, the one thing that orders the
 * queue's writers across hosts: taken for the check and the append together,
 * and given back at once. A run in progress holds the lease: the write waits
 * for it, looking again every QUEUE_LEASE_POLL_MS, for at most
 * QUEUE_LEASE_WAIT_MS, then fails `busy`.
 *
 * Why not inbox/ (as for events): a queue record is not an event, and the
 * drain moves files into events.jsonl with an exactly-once rule of that log;
 * a second journal would need a second such rule. A revisit is rarely
 * scheduled by hand into a session that is running right then, and the
 * lease makes the write immediate and visible (its id is real at once).
 */
import { iso, type Clock } from '../foundation/clock.js';
import { readLeaseOwner } from '../foundation/lease.js';
import { takeSessionLease } from '../store/session-lease.js';
import { busy, OpenboaError } from '../foundation/errors.js';
import type { SessionStore } from '../store/session-store.js';

/** How long a write waits for a run to give the lease back: a short run ends meanwhile; a long one is said. */
export const QUEUE_LEASE_WAIT_MS = 30_000;
/** How often it looks again (a run gives the lease back at its end, which sends no signal to another host). */
export const QUEUE_LEASE_POLL_MS = 250;

/**
 * Runs `write` (a check of the queue and its append) as a person's write to
 * the session's queue: at once on an unshared home, else under the
 * session's lease (see the module comment). Throws what `write` throws, or
 * `busy` when a run held the lease for the whole wait.
 */
export async function asQueueWriter<T>(store: SessionStore, clock: Clock, sessionId: string, write: () => T): Promise<T> {
  if (!store.shared) return write();
  const p = store.require(sessionId);
  const until = clock.now() + QUEUE_LEASE_WAIT_MS;
  for (;;) {
    let lease;
    try {
      lease = await takeSessionLease(p, true, { purpose: 'schedule', nowIso: iso(clock.now()) });
    } catch (e) {
      if (!OpenboaError.is(e) || e.code !== 'busy') throw e;
      const left = until - clock.now();
      if (left <= 0) {
        const o = readLeaseOwner(p);
        const by = o ? ` (${o.purpose}${o.wake_id ? ` ${o.wake_id}` : ''} on ${o.host})` : '';
        throw busy(`session ${sessionId} is held by a run${by} for over ${QUEUE_LEASE_WAIT_MS / 1000} s; on a shared home the wake queue is written under the session's lease: try again when the run ends`);
      }
      await clock.sleep(Math.min(QUEUE_LEASE_POLL_MS, left));
      continue;
    }
    try {
      return write();
    } finally {
      await lease.release();
    }
  }
}
