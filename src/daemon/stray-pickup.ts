/**
 * Work in other daemons' shards (`--shard`) that nobody takes: its daemon is
 * dead, or has more work than it can run. Every `periodMs` this looks at the
 * sessions outside the shard, cheaply, and hands back (`adopt`) those that
 * have had work waiting for a whole period with no run making progress in
 * between: the journals' sizes unchanged. (New input, files arriving in
 * inbox/, is not progress: a stream of messages to a dead host's session
 * must not keep it from being taken.) The session's
 * lease still decides who runs it: a daemon that adopts a session its owner
 * is running finds the lease held and lets it be.
 *
 * Cost per period and foreign session: three stats (the journals, the
 * inbox/ folder); its inbox is listed and the session folded
 * (store.snapshot, from its cursors) only when one of those moved, a due
 * time passed or work waited, so an idle home costs stats alone.
 *
 * A pass looks at SLICE sessions per turn of the event loop (awaiting
 * `nextTurn` between slices), so it never holds up runs for long; and, as
 * the polling rounds (poll-watches.ts), the next pass waits at least what
 * keeps the passes' own CPU time under `cpuShare` of a core, up to `capMs`:
 * at 10,000 sessions on a network file system a pass costs far more than
 * `periodMs` allows. A dead host's work is then taken a stretched period or
 * two after its lease goes stale, not within the stale time.
 *
 * The period runs on the injected clock, like every timer of the daemon.
 */
import fs from 'node:fs';
import path from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Clock } from '../core/foundation/clock.js';
import type { SessionSnapshot } from '../core/schema/index.js';
import type { SessionStore } from '../core/store/session-store.js';
import { planRun, nextDueMs } from '../core/run/plan.js';
import { inboxHasFiles } from '../core/store/inbox.js';
import { observedStale } from '../core/foundation/lease.js';
import { SliceMeter, spacedMs } from './poll-watches.js';

/** Foreign sessions looked at per turn of the event loop. */
const SLICE = 500;

export interface StrayPickupOptions {
  clock: Clock;
  periodMs: number;
  /** The lease's stale time (LEASE_STALE_MS). */
  leaseStaleMs: number;
  store: Pick<SessionStore, 'listIds' | 'snapshot' | 'paths'>;
  sessionsDir: string;
  /** Whether this daemon's shard holds the session (those are not strays). */
  owns: (sessionId: string) => boolean;
  /** Whether this daemon runs or has queued the session already. */
  busy: (sessionId: string) => boolean;
  adopt: (sessionId: string, snap: SessionSnapshot) => void;
  /** The share of one core the passes may take, up to `capMs` between passes (defaults: poll-watches.ts, spacedMs). */
  cpuShare?: number;
  capMs?: number;
  /** This process's CPU time so far, ms (default: process.cpuUsage()). */
  cpuMs?: () => number;
  nextTurn?: () => Promise<void>;
}

interface Seen {
  stamp: string;
  /** Work was waiting at the last look (with this stamp). */
  waiting: boolean;
  /** The session's next due time at the last fold (ms), null when none. */
  due: number | null;
  /** The inbox/ folder's mtime, and when (this clock) that value was first seen. */
  inboxMtime: number;
  inboxSince: number;
  /** Whether inbox/ held files at the last listing. */
  inboxFull: boolean;
}

export class StrayPickup {
  private readonly seen = new Map<string, Seen>();
  private cancel: (() => void) | null = null;
  private stopped = false;
  /** Sessions adopted since start (tests, benchmarks). */
  adopted = 0;
  /** The wait before the next pass, ms: periodMs, stretched by the last pass's CPU time. */
  nextPeriodMs: number;

  constructor(private readonly o: StrayPickupOptions) {
    this.nextPeriodMs = o.periodMs;
  }

  start(): void {
    if (this.stopped) return;
    this.cancel = this.o.clock.setTimer(this.nextPeriodMs, () => {
      // A pass that fails (sessions/ unreadable for a moment) is tried again a period later.
      const again = () => this.start();
      void this.pass().then(again, again);
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
    return `${e?.size ?? -1}:${w?.size ?? -1}`;
  }

  /** One look at every foreign session (see the module comment). */
  async pass(): Promise<void> {
    if (this.stopped) return;
    const meter = new SliceMeter(this.o.cpuMs);
    const now = this.o.clock.now();
    const present = new Set<string>();
    const ids = this.o.store.listIds();
    for (let i = 0; i < ids.length; i++) {
      if (i > 0 && i % SLICE === 0) {
        await meter.pause(this.o.nextTurn ?? nextTurn);
        if (this.stopped) return;
      }
      const id = ids[i] as string;
      if (this.o.owns(id)) continue;
      present.add(id);
      if (this.o.busy(id)) continue;
      const stamp = this.stamp(id);
      const prev = this.seen.get(id);
      const unchanged = prev !== undefined && prev.stamp === stamp;
      const inboxMtime = fs.statSync(this.o.sessionsDir + path.sep + id + path.sep + 'inbox', { throwIfNoEntry: false })?.mtimeMs ?? -1;
      const inboxSince = prev && prev.inboxMtime === inboxMtime ? prev.inboxSince : now;
      // A file renamed in moves the folder's mtime; one renamed in within the mtime's precision of the last
      // listing does not, so a value is trusted only once it has stood a whole period.
      const inboxQuiet = prev !== undefined && !prev.inboxFull && prev.inboxMtime === inboxMtime && now - inboxSince >= this.o.periodMs;
      if (unchanged && !prev.waiting && (prev.due === null || prev.due > now) && inboxQuiet) {
        prev.inboxSince = inboxSince;
        continue;
      }
      let snap: SessionSnapshot;
      try {
        snap = this.o.store.snapshot(id, { persist: false });
      } catch {
        continue; // going or unreadable: its owner (or the next pass) sees to it
      }
      const paths = this.o.store.paths(id);
      const inboxFull = inboxHasFiles(paths);
      const waiting = planRun(snap, now, {}).runnable || inboxFull;
      // The lease a dead owner left is judged by how long it is seen unrefreshed: start watching it now, so it
      // can be taken at the adoption, a period from now, or soon after (lease.ts).
      if (waiting && fs.existsSync(paths.lease)) observedStale(paths, this.o.leaseStaleMs, undefined, { observeOnly: true });
      this.seen.set(id, { stamp, waiting, due: nextDueMs(snap), inboxMtime, inboxSince, inboxFull });
      if (waiting && unchanged && prev.waiting) {
        this.adopted += 1;
        this.o.adopt(id, snap);
      }
    }
    for (const id of this.seen.keys()) if (!present.has(id)) this.seen.delete(id);
    this.nextPeriodMs = spacedMs(this.o.periodMs, meter.end(), this.o.cpuShare, this.o.capMs);
  }
}
