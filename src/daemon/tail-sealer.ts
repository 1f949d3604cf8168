/**
 * Unfinished last lines. A line of events.jsonl or wake-queue.jsonl without
 * its "\n" is still being written, and the fold holds it back (`held_back`)
 * — unless it stays so for TAIL_GRACE_MS (a writer died, or `printf` without
 * a newline). Then it is sealed, so the line is read: delivered if it is a
 * valid event, reported if not. Nothing a person wrote waits forever unseen.
 *
 * A file whose size changed during the grace is left alone (its writer is
 * alive); the look that follows the grace arms a new one if the line is
 * still unfinished. Timers run on the injected clock, like every timer of
 * the daemon: tests move time instead of waiting.
 */
import fs from 'node:fs';
import type { Clock } from '../core/foundation/clock.js';
import type { SessionSnapshot } from '../core/schema/index.js';
import { sealTail, TAIL_GRACE_MS } from '../core/store/jsonl.js';
import type { SessionPaths } from '../core/foundation/home.js';

export interface TailSealerOptions {
  clock: Clock;
  paths: (sessionId: string) => SessionPaths;
  /** Says that a line was sealed (the operator log). */
  notice: (message: string, fields: Record<string, unknown>) => void;
  /** Called when a grace ends, sealed or not: the session is to be looked at again. Not called after stop(). */
  onGraceEnd: (sessionId: string) => void;
}

export class TailSealer {
  /** Sessions whose unfinished last line is being given its grace: the timer's cancel. */
  private readonly timers = new Map<string, () => void>();
  private stopped = false;

  constructor(private readonly o: TailSealerOptions) {}

  /**
   * Starts the grace for what `snap` holds back, sized as the snapshot saw
   * the files. Does nothing when the session's grace is already running, or
   * after stop().
   */
  arm(sessionId: string, snap: SessionSnapshot): void {
    if (this.timers.has(sessionId) || this.stopped) return;
    const p = this.o.paths(sessionId);
    const sizes = { events: snap.journals.events.offset + snap.held_back.events, wakeQueue: snap.journals.wake_queue.offset + snap.held_back.wake_queue };
    const cancel = this.o.clock.setTimer(TAIL_GRACE_MS, () => {
      this.timers.delete(sessionId);
      if (this.stopped) return;
      const size = (f: string) => fs.statSync(f, { throwIfNoEntry: false })?.size ?? -1;
      let sealed = false;
      if (snap.held_back.events && size(p.events) === sizes.events) sealed = sealTail(p.events) || sealed;
      if (snap.held_back.wake_queue && size(p.wakeQueue) === sizes.wakeQueue) sealed = sealTail(p.wakeQueue) || sealed;
      if (sealed) this.o.notice(`sealed an unfinished last line in session ${sessionId} after ${TAIL_GRACE_MS} ms`, { session_id: sessionId });
      this.o.onGraceEnd(sessionId);
    });
    this.timers.set(sessionId, cancel);
  }

  /** Cancels every grace; nothing is sealed, and arm() does nothing, from now on. */
  stop(): void {
    this.stopped = true;
    for (const cancel of this.timers.values()) cancel();
    this.timers.clear();
  }
}
