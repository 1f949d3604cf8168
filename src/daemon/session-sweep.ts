/**
 * The safety sweep: watch as a hint, read for the truth, and sweep now and
 * then for what a watcher missed (a dropped event, a network filesystem, a
 * change made while the watcher was starting).
 *
 * It remembers, per session, the journal sizes the daemon last folded, and
 * re-stats sessions against them. A session whose events.jsonl or
 * wake-queue.jsonl is not the size folded, a session it has not seen, and
 * one whose inbox/ has work, are handed back to be looked at again; the look
 * decides, the sweep only points.
 *
 * Two kinds of sweep, every period:
 * - A full sweep stats every session (three stats a session, no journal or
 *   folder read: about 12 ms per 1,000 idle sessions). It runs at start
 *   (run(true)) and every FULL_SWEEP_EVERY-th period: a change no watcher
 *   reported is found within FULL_SWEEP_EVERY periods (5 minutes at the
 *   default 30 s), whatever the number of sessions.
 * - The other periods stat only the sessions that gave a sign of change
 *   since the last sweep (a watcher hint: note `hinted`), whose inbox a
 *   drain left stuck, or whose inbox mtime was too fresh to trust. At 10,000
 *   idle sessions they stat nothing, where a full sweep every 30 s kept the
 *   daemon at about 0.4 % of a core.
 *
 * The inbox is listed only when it can have changed: its folder's mtime
 * moved since the sweep last found it empty (a file renamed in or out moves
 * it), the mtime is too fresh to trust (a change in the same clock tick as
 * the last look leaves it equal: RACY_MS), or a drain left it stuck (the
 * holds decide when that counts again). Appends to a journal do not move its
 * folder's mtime, which is why the journals themselves are stat'ed.
 *
 * A sweep goes in slices of SLICE sessions, yielding between them, so it
 * never holds up a hint or a run for long.
 *
 * The period runs on the injected clock, like every timer of the daemon.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Clock } from '../core/foundation/clock.js';
import type { SessionSnapshot } from '../core/schema/index.js';
import type { SessionStore } from '../core/store/session-store.js';

export interface SessionSweepOptions {
  clock: Clock;
  /** The period, ms. */
  periodMs: number;
  store: Pick<SessionStore, 'listIds'>;
  /** Where the session folders are (home.sessionsDir). */
  sessionsDir: string;
  /** Whether the session's inbox/ has something a drain could take (SessionHolds.inboxWork). */
  inboxWork: (sessionId: string) => boolean;
  /** Whether a drain left the session's inbox/ stuck (SessionHolds.inboxStuck): it is listed every sweep. */
  inboxStuck: (sessionId: string) => boolean;
  /** The sessions whose inbox/ a drain left stuck (SessionHolds.stuckInboxIds): every sweep looks at them. */
  stuckInboxes: () => Iterable<string>;
  /** A session to look at again: it moved, it is new, or its inbox has work. */
  onStale: (sessionId: string) => void;
}

/** Journal sizes (bytes) as last folded, and the inbox folder's mtime when last found empty (NaN: not yet). */
interface Folded {
  events: number;
  wakeQueue: number;
  inboxMtime: number;
}

/** Sessions stat'ed per turn of the event loop. */
const SLICE = 1000;
/** Every this many periods, a sweep stats every session (see the module comment). */
export const FULL_SWEEP_EVERY = 10;
/** An inbox mtime this close to the sweep's clock may hide a change in the same tick: listed anyway. */
const RACY_MS = 2000;

export class SessionSweep {
  private readonly folded = new Map<string, Folded>();
  /** Sessions to stat at the next sweep, full or not: hinted since the last one, or an inbox too fresh to trust. */
  private readonly marked = new Set<string>();
  private cancel: (() => void) | null = null;
  private stopped = false;
  private periods = 0;

  constructor(private readonly o: SessionSweepOptions) {}

  /** Records what a snapshot folded: the sizes the next sweep compares against. */
  note(sessionId: string, snap: SessionSnapshot): void {
    const k = this.folded.get(sessionId);
    if (k) {
      k.events = snap.journals.events.offset;
      k.wakeQueue = snap.journals.wake_queue.offset;
    } else {
      this.folded.set(sessionId, { events: snap.journals.events.offset, wakeQueue: snap.journals.wake_queue.offset, inboxMtime: NaN });
    }
  }

  /** A watcher's hint for the session: the next sweep stats it, full or not. */
  hinted(sessionId: string): void {
    this.marked.add(sessionId);
  }

  /** The session is gone: the next sweep treats it as new if it is there again. */
  forget(sessionId: string): void {
    this.folded.delete(sessionId);
    this.marked.delete(sessionId);
  }

  /**
   * One sweep, from now: calls onStale for every session looked at that
   * moved, is new, or has inbox work, a slice at a time. `full`: every
   * session; otherwise those marked since the last sweep and those whose
   * inbox a drain left stuck. Nothing after stop().
   */
  run(full: boolean): void {
    if (this.stopped) return;
    const ids = full ? this.o.store.listIds() : [...new Set([...this.marked, ...this.o.stuckInboxes()])];
    this.marked.clear();
    const step = (from: number) => {
      if (this.stopped) return;
      const to = Math.min(ids.length, from + SLICE);
      const now = this.o.clock.now();
      for (let i = from; i < to; i++) this.check(ids[i] as string, now);
      if (to < ids.length) setImmediate(() => step(to));
    };
    step(0);
  }

  private check(id: string, now: number) {
    const k = this.folded.get(id);
    if (!k) return this.o.onStale(id);
    // Not store.paths(): it joins nine paths a session, most of the sweep's cost at 10,000 sessions.
    const dir = this.o.sessionsDir + path.sep + id + path.sep;
    if (size(dir + 'events.jsonl') !== k.events || size(dir + 'wake-queue.jsonl') !== k.wakeQueue) return this.o.onStale(id);
    const mtime = fs.statSync(dir + 'inbox', { throwIfNoEntry: false })?.mtimeMs ?? -1;
    const stuck = this.o.inboxStuck(id);
    const racy = Math.abs(now - mtime) < RACY_MS;
    // Too fresh to trust: looked at again next time, full sweep or not.
    if (racy && mtime >= 0) this.marked.add(id);
    if (mtime === k.inboxMtime && !stuck && !racy) return;
    if (this.o.inboxWork(id)) return this.o.onStale(id);
    if (!stuck) k.inboxMtime = mtime;
  }

  /** Sweeps every period from now until stop(); every FULL_SWEEP_EVERY-th is full. */
  start(): void {
    if (this.stopped) return;
    this.cancel = this.o.clock.setTimer(this.o.periodMs, () => {
      this.periods += 1;
      this.run(this.periods % FULL_SWEEP_EVERY === 0);
      this.start();
    });
  }

  /** Cancels the next sweep; run() and start() do nothing from now on. */
  stop(): void {
    this.stopped = true;
    this.cancel?.();
  }
}

function size(file: string): number {
  return fs.statSync(file, { throwIfNoEntry: false })?.size ?? -1;
}
