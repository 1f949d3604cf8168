/**
 * The safety sweep: watch as a hint, read for the truth, and sweep now and
 * then for what a watcher missed (a dropped event, a network filesystem, a
 * change made while the watcher was starting).
 *
 * It remembers, per session, the journal sizes the daemon last folded, and
 * every period re-stats each session against them. A session whose
 * events.jsonl or wake-queue.jsonl is not the size folded, a session it has
 * not seen, and one whose inbox/ has work, are handed back to be looked at
 * again; the look decides, the sweep only points. Stats are cheap, so a sweep
 * of thousands of idle sessions reads no journal.
 *
 * The period runs on the injected clock, like every timer of the daemon.
 */
import fs from 'node:fs';
import type { Clock } from '../core/clock.js';
import type { SessionSnapshot } from '../core/schema/index.js';
import type { SessionStore } from '../core/store/session-store.js';

export interface SessionSweepOptions {
  clock: Clock;
  /** The period, ms. */
  periodMs: number;
  store: Pick<SessionStore, 'listIds' | 'paths'>;
  /** Whether the session's inbox/ has something a drain could take (SessionHolds.inboxWork). */
  inboxWork: (sessionId: string) => boolean;
  /** A session to look at again: it moved, it is new, or its inbox has work. */
  onStale: (sessionId: string) => void;
}

/** Journal sizes (bytes) as last folded. */
interface Folded {
  events: number;
  wakeQueue: number;
}

export class SessionSweep {
  private readonly folded = new Map<string, Folded>();
  private cancel: (() => void) | null = null;
  private stopped = false;

  constructor(private readonly o: SessionSweepOptions) {}

  /** Records what a snapshot folded: the sizes the next sweep compares against. */
  note(sessionId: string, snap: SessionSnapshot): void {
    this.folded.set(sessionId, { events: snap.journals.events.offset, wakeQueue: snap.journals.wake_queue.offset });
  }

  /** The session is gone: the next sweep treats it as new if it is there again. */
  forget(sessionId: string): void {
    this.folded.delete(sessionId);
  }

  /** One sweep, now: calls onStale for every session that moved, is new, or has inbox work. Nothing after stop(). */
  run(): void {
    if (this.stopped) return;
    const size = (f: string) => {
      try {
        return fs.statSync(f).size;
      } catch {
        return -1;
      }
    };
    for (const id of this.o.store.listIds()) {
      const k = this.folded.get(id);
      if (!k) {
        this.o.onStale(id);
        continue;
      }
      const p = this.o.store.paths(id);
      if (size(p.events) !== k.events || size(p.wakeQueue) !== k.wakeQueue || this.o.inboxWork(id)) this.o.onStale(id);
    }
  }

  /** Sweeps every period from now until stop(). */
  start(): void {
    if (this.stopped) return;
    this.cancel = this.o.clock.setTimer(this.o.periodMs, () => {
      this.run();
      this.start();
    });
  }

  /** Cancels the next sweep; run() and start() do nothing from now on. */
  stop(): void {
    this.stopped = true;
    this.cancel?.();
  }
}
