/**
 * One timer for the earliest due time across all sessions — no timer per
 * session, no polling loop. Sessions set (or clear) their next due time; a
 * min-heap with lazy deletion finds the earliest, and a single clock timer is
 * armed for it. When it fires, every session due by then is handed to
 * `onDue`, and the timer is re-armed for the next one.
 *
 * Timers are capped at MAX_SLEEP_MS so a suspended machine (whose monotonic
 * timers stop) re-checks wall-clock due times soon after it wakes.
 */
import type { Clock } from '../core/foundation/clock.js';

export const MAX_SLEEP_MS = 30_000;

interface Entry {
  at: number;
  id: string;
}

export class DueScheduler {
  private readonly due = new Map<string, number>();
  private heap: Entry[] = [];
  private cancel: (() => void) | null = null;
  private armedAt = Infinity;
  private stopped = false;

  constructor(
    private readonly clock: Clock,
    private readonly onDue: (ids: string[]) => void,
  ) {}

  /** Sets a session's next due time (ms since the epoch), or clears it with null. */
  set(id: string, at: number | null): void {
    if (at === null) {
      this.due.delete(id);
    } else if (this.due.get(id) !== at) {
      this.due.set(id, at);
      this.push({ at, id });
    }
    this.arm();
  }

  get size(): number {
    return this.due.size;
  }

  nextAt(): number | null {
    this.prune();
    return this.heap[0]?.at ?? null;
  }

  stop(): void {
    this.stopped = true;
    this.cancel?.();
    this.cancel = null;
  }

  private push(e: Entry) {
    const h = this.heap;
    h.push(e);
    let i = h.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if ((h[parent] as Entry).at <= e.at) break;
      h[i] = h[parent] as Entry;
      i = parent;
    }
    h[i] = e;
  }

  private pop(): Entry | undefined {
    const h = this.heap;
    const top = h[0];
    const last = h.pop();
    if (h.length > 0 && last) {
      h[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && (h[l] as Entry).at < (h[m] as Entry).at) m = l;
        if (r < h.length && (h[r] as Entry).at < (h[m] as Entry).at) m = r;
        if (m === i) break;
        [h[i], h[m]] = [h[m] as Entry, h[i] as Entry];
        i = m;
      }
    }
    return top;
  }

  /** Drops heap entries that no longer match a session's current due time. */
  private prune() {
    while (this.heap.length) {
      const top = this.heap[0] as Entry;
      if (this.due.get(top.id) === top.at) return;
      this.pop();
    }
  }

  private arm() {
    if (this.stopped) return;
    const next = this.nextAt();
    if (next === null) {
      this.cancel?.();
      this.cancel = null;
      this.armedAt = Infinity;
      return;
    }
    if (this.cancel && next >= this.armedAt) return; // already armed early enough
    this.cancel?.();
    const wait = Math.min(MAX_SLEEP_MS, Math.max(0, next - this.clock.now()));
    this.armedAt = this.clock.now() + wait;
    this.cancel = this.clock.setTimer(wait, () => this.fire());
  }

  private fire() {
    this.cancel = null;
    this.armedAt = Infinity;
    const now = this.clock.now();
    const ready: string[] = [];
    for (;;) {
      this.prune();
      const top = this.heap[0];
      if (!top || top.at > now) break;
      this.pop();
      this.due.delete(top.id);
      ready.push(top.id);
    }
    this.arm();
    if (ready.length) this.onDue(ready);
  }
}
