/**
 * Background work gives way to runs that are starting.
 *
 * The daemon's one thread serves its runs and its background work in turns
 * of the event loop: the start scan (a batch of sessions, a slice of a long
 * log's fold), the search index's catch-up (one chunk of a log), the
 * watcher's setup and the sweep (a slice of sessions). A run starts over two
 * turns at least (the watcher's hint, then the run's own first turn, up to
 * its `session.status_running`), and any background slice waiting in the
 * queue of immediates goes before it in each: at 4 ms a chunk, an append
 * next to a 100,000-event log being indexed waited two or three chunks more
 * than one in a quiet home (p50 12-16 ms against 5-6 ms).
 *
 * So a run holds the gate from the moment it has its slot until it has
 * opened (or ended without opening), and background work asks for its next
 * turn through the gate between two slices.
 *
 * Contracts:
 * - hold() marks a run starting; the function it returns ends that (calling
 *   it again does nothing).
 * - turn() resolves on a later turn of the event loop (setImmediate) once no
 *   run is starting, then one turn more, so the opened run's continuation
 *   goes first; with none starting it costs one turn, as before.
 * - turn() waits at most `maxWaitMs` on the clock: a stream of starts slows
 *   background work, never stops it.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Clock } from '../core/foundation/clock.js';

/** The longest background work waits for runs to start, ms: at least one slice a second goes on however busy. */
export const MAX_GIVE_WAY_MS = 1000;

export class BackgroundGate {
  private holds = 0;
  private readonly waiting = new Set<() => void>();

  constructor(
    private readonly clock: Pick<Clock, 'setTimer'>,
    private readonly maxWaitMs = MAX_GIVE_WAY_MS,
  ) {}

  /** Whether a run is starting now. */
  get busy(): boolean {
    return this.holds > 0;
  }

  /** A run is starting until the returned function is called. */
  hold(): () => void {
    this.holds += 1;
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      this.holds -= 1;
      if (this.holds === 0) for (const go of [...this.waiting]) go();
    };
  }

  /** Background work's next turn: see the contracts above. */
  turn = async (): Promise<void> => {
    await nextTurn();
    if (this.holds === 0) return;
    await new Promise<void>((resolve) => {
      const go = () => {
        this.waiting.delete(go);
        cancel();
        resolve();
      };
      const cancel = this.clock.setTimer(this.maxWaitMs, go);
      this.waiting.add(go);
    });
    await nextTurn();
  };
}
