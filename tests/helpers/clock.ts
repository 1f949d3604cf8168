/**
 * A manual clock for tests: time moves only when the test says so, and
 * timers fire in due order as it advances. Nothing sleeps on real time.
 */
import type { Clock } from '../../src/core/foundation/clock.js';

interface Timer {
  at: number;
  fn: () => void;
  seq: number;
  ms: number;
}

export class ManualClock implements Clock {
  private t: number;
  private timers: Timer[] = [];
  private seq = 0;

  constructor(start = Date.parse('2026-11-21T10:00:00.000Z')) {
    this.t = start;
  }

  now(): number {
    return this.t;
  }

  private armedWaiters: Array<{ ms: number; resolve: () => void }> = [];

  setTimer(ms: number, fn: () => void): () => void {
    const timer = { at: this.t + Math.max(0, ms), fn, seq: this.seq++, ms };
    this.timers.push(timer);
    for (const w of this.armedWaiters.filter((x) => x.ms === ms)) {
      this.armedWaiters.splice(this.armedWaiters.indexOf(w), 1);
      w.resolve();
    }
    return () => {
      this.timers = this.timers.filter((x) => x !== timer);
    };
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const cancel = this.setTimer(ms, () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      });
      const onAbort = () => {
        cancel();
        reject(signal?.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Moves time forward, firing every timer that comes due, in order. */
  async advance(ms: number): Promise<void> {
    const end = this.t + ms;
    for (;;) {
      this.timers.sort((a, b) => a.at - b.at || a.seq - b.seq);
      const next = this.timers[0];
      if (!next || next.at > end) break;
      this.timers.shift();
      this.t = Math.max(this.t, next.at);
      next.fn();
      await Promise.resolve();
    }
    this.t = end;
  }

  /**
   * Advances `stepMs` at a time until `pred` holds, giving the process a
   * turn for its I/O between steps; rejects once `maxMs` of this clock have
   * passed without it. For a timer whose delay the code under test chooses
   * as it goes (a polling round spaced by its own cost), where one advance
   * by the nominal interval may fall short.
   */
  async advanceUntil(pred: () => boolean, stepMs: number, maxMs: number): Promise<void> {
    for (let passed = 0; !pred(); passed += stepMs) {
      if (passed >= maxMs) throw new Error(`not so after ${maxMs} ms of the manual clock`);
      await this.advance(stepMs);
      await new Promise((r) => setTimeout(r, 5));
    }
  }

  /** Resolves once a timer of exactly `ms` is pending (already, or when code under test arms one). */
  armed(ms: number): Promise<void> {
    if (this.timers.some((x) => x.ms === ms)) return Promise.resolve();
    return new Promise((resolve) => this.armedWaiters.push({ ms, resolve }));
  }

  get pendingTimers(): number {
    return this.timers.length;
  }
}
