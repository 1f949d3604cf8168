/**
 * Work in other daemons' shards (`--shard`) that nobody takes: its daemon is
 * dead, or has more work than it can run. Every `periodMs` this looks at the
 * sessions outside the shard, cheaply, and hands back (`adopt`) those that
 * have had work waiting for a whole period with nothing written in between:
 * the journals' sizes and the inbox/ folder's mtime unchanged. The session's
 * lease still decides who runs it: a daemon that adopts a session its owner
 * is running finds the lease held and lets it be.
 *
 * Cost per period and foreign session: three stats; the session is folded
 * (store.snapshot, from its cursors) only when those changed or a due time
 * it had passed, so an idle home costs stats alone.
 *
 * The period runs on the injected clock, like every timer of the daemon.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Clock } from '../core/foundation/clock.js';
import type { SessionSnapshot } from '../core/schema/index.js';
import type { SessionStore } from '../core/store/session-store.js';
import { planRun, nextDueMs } from '../core/run/plan.js';
import { inboxHasFiles } from '../core/store/inbox.js';

export interface StrayPickupOptions {
  clock: Clock;
  periodMs: number;
  store: Pick<SessionStore, 'listIds' | 'snapshot' | 'paths'>;
  sessionsDir: string;
  /** Whether this daemon's shard holds the session (those are not strays). */
  owns: (sessionId: string) => boolean;
  /** Whether this daemon runs or has queued the session already. */
  busy: (sessionId: string) => boolean;
  adopt: (sessionId: string, snap: SessionSnapshot) => void;
}

interface Seen {
  stamp: string;
  /** Work was waiting at the last look (with this stamp). */
  waiting: boolean;
  /** The session's next due time at the last fold (ms), null when none. */
  due: number | null;
}

export class StrayPickup {
  private readonly seen = new Map<string, Seen>();
  private cancel: (() => void) | null = null;
  private stopped = false;
  /** Sessions adopted since start (tests, benchmarks). */
  adopted = 0;

  constructor(private readonly o: StrayPickupOptions) {}

  start(): void {
    if (this.stopped) return;
    this.cancel = this.o.clock.setTimer(this.o.periodMs, () => {
      this.pass();
      this.start();
    });
  }

  stop(): void {
    this.stopped = true;
    this.cancel?.();
  }

  private stamp(id: string): string {
    const dir = this.o.sessionsDir + path.sep + id + path.sep;
    const e = fs.statSync(dir + 'events.jsonl', { throwIfNoEntry: false });
    const w = fs.statSync(dir + 'wake-queue.jsonl', { throwIfNoEntry: false });
    const i = fs.statSync(dir + 'inbox', { throwIfNoEntry: false });
    return `${e?.size ?? -1}:${w?.size ?? -1}:${i?.mtimeMs ?? -1}`;
  }

  /** One look at every foreign session (see the module comment). */
  pass(): void {
    if (this.stopped) return;
    const now = this.o.clock.now();
    const present = new Set<string>();
    for (const id of this.o.store.listIds()) {
      if (this.o.owns(id)) continue;
      present.add(id);
      if (this.o.busy(id)) continue;
      const stamp = this.stamp(id);
      const prev = this.seen.get(id);
      const unchanged = prev !== undefined && prev.stamp === stamp;
      if (unchanged && !prev.waiting && (prev.due === null || prev.due > now)) continue;
      let snap: SessionSnapshot;
      try {
        snap = this.o.store.snapshot(id, { persist: false });
      } catch {
        continue; // going or unreadable: its owner (or the next pass) sees to it
      }
      const waiting = planRun(snap, now, {}).runnable || inboxHasFiles(this.o.store.paths(id));
      this.seen.set(id, { stamp, waiting, due: nextDueMs(snap) });
      if (waiting && unchanged && prev.waiting) {
        this.adopted += 1;
        this.o.adopt(id, snap);
      }
    }
    for (const id of this.seen.keys()) if (!present.has(id)) this.seen.delete(id);
  }
}
