/**
 * Sessions whose run found the lease held by another process (another
 * host's daemon that took it as stray work, an `openboa wake`): the daemon
 * holds them back until the lease could have gone stale (daemon-run.ts,
 * about 10 s), and this looks at their lease folder every `periodMs` so
 * that they are looked at again as soon as it is gone. The holder took in
 * only what was there when its run began; what was delivered meanwhile
 * (a message rung on the doorbell, which this daemon consumed) would
 * otherwise wait out the whole hold.
 *
 * Contracts:
 * - `watch(id)` after a busy lease; `forget(id)` when a run of the session
 *   begins here (its own lease must not release it) or the session goes.
 * - `onFree(id)` once per watch, when the lease folder is gone (the lease
 *   was released, or broken as stale by anyone). What happens then is the
 *   caller's: the files decide, and a lease taken again meanwhile only means
 *   another busy, another watch.
 * - Costs one stat per watched session per period, and nothing (no timer)
 *   while none is watched. At most MAX_WATCHED at once; past that a session
 *   waits out its hold as before.
 */
import fs from 'node:fs';
import type { Clock } from '../core/foundation/clock.js';

export interface LeaseWatchOptions {
  clock: Pick<Clock, 'setTimer'>;
  /** Where the session's lease folder is (SessionPaths.lease). */
  leasePath: (sessionId: string) => string;
  onFree: (sessionId: string) => void;
  /** How often the leases are looked at (default LEASE_WATCH_MS). */
  periodMs?: number;
}

/** A quarter of a second: the lease's own refresh is every 2 s, and a freed session should not wait much longer than a doorbell tick. */
export const LEASE_WATCH_MS = 250;
const MAX_WATCHED = 1000;

export class LeaseWatch {
  private readonly watched = new Set<string>();
  private cancel: (() => void) | null = null;
  private stopped = false;

  constructor(private readonly o: LeaseWatchOptions) {}

  watch(id: string): void {
    if (this.stopped || this.watched.size >= MAX_WATCHED) return;
    this.watched.add(id);
    if (!this.cancel) this.cancel = this.o.clock.setTimer(this.o.periodMs ?? LEASE_WATCH_MS, () => this.tick());
  }

  forget(id: string): void {
    this.watched.delete(id);
  }

  private tick() {
    this.cancel = null;
    if (this.stopped) return;
    for (const id of [...this.watched]) {
      if (fs.existsSync(this.o.leasePath(id))) continue;
      this.watched.delete(id);
      this.o.onFree(id);
    }
    if (this.watched.size && !this.stopped && !this.cancel) this.cancel = this.o.clock.setTimer(this.o.periodMs ?? LEASE_WATCH_MS, () => this.tick());
  }

  stop(): void {
    this.stopped = true;
    this.cancel?.();
    this.cancel = null;
    this.watched.clear();
  }
}
