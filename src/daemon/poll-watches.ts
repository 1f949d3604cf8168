/**
 * The polling half of the session watcher (`--poll`), for a home on a
 * network file system, where inotify reports nothing another host wrote.
 * Cheap enough for a large shared home: per round, one listing of
 * `sessions/` and, per session, the size and mtime of events.jsonl and
 * wake-queue.jsonl and the mtime of its inbox/ folder (three stats, no file
 * is opened or read, no folder but `sessions/` is listed). Nothing else is
 * kept per session than those five numbers.
 *
 * Contracts (those of FolderWatches, which it stands in for):
 * - `onHint(id)` for a session whose stats changed since the last round,
 *   and for a session folder that appeared; `onGone(id)` for one that went.
 *   The first round only records (the daemon's start scan looks at every
 *   session anyway) and then emits 'ready'.
 * - The interval adapts: `minMs` after a round that found a change, then
 *   half again as long after each quiet round, up to `maxMs`. A busy home is
 *   polled often; an idle one costs a round every `maxMs`.
 * - And it is never shorter than what keeps the rounds' own CPU time (this
 *   process's, measured around each slice) under `cpuShare` of a core, up
 *   to `capMs`: a round of 10,000 sessions over sshfs costs about 0.6 s of
 *   CPU, and is then made every 30 s or so (at most once a minute). (A
 *   session rung on the home's doorbell is looked at within 100 ms whatever
 *   this interval: ring-reader.ts; the rounds are for writers that do not
 *   ring.)
 * - A round stats SLICE sessions per turn of the event loop (awaiting
 *   `nextTurn` between slices), so it never holds up runs for long.
 * - `owns(id)` limits the stats to this daemon's share (`--shard`); new and
 *   gone folders are reported for every session.
 * - A file or folder that vanishes between the listing and the stat is a
 *   normal race: it reads as absent, which is a change like any other.
 * - close() stops the rounds; no hint after it.
 */
import { EventEmitter } from 'node:events';
import fs from 'node:fs';
import path from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Clock } from '../core/foundation/clock.js';
import { listSessionIds } from '../core/store/session-dirs.js';

export interface PollWatchesOptions {
  sessionsDir: string;
  clock: Pick<Clock, 'setTimer'>;
  onHint: (sessionId: string) => void;
  onGone: (sessionId: string) => void;
  /** The shortest interval, after a round that found a change (default 250 ms). */
  minMs?: number;
  /** The longest, reached after quiet rounds (default 2 s). */
  maxMs?: number;
  /** The share of one core the rounds may take (default POLL_CPU_SHARE): the interval is stretched to keep to it. */
  cpuShare?: number;
  /** The longest that stretch may make the interval (default POLL_CAP_MS). */
  capMs?: number;
  /** This process's CPU time so far, ms (default: process.cpuUsage()). */
  cpuMs?: () => number;
  /** The sessions whose files this daemon polls (default: all). */
  owns?: (sessionId: string) => boolean;
  nextTurn?: () => Promise<void>;
}

/** Sessions stat'ed per turn of the event loop. */
const SLICE = 500;
/** Each quiet round lengthens the interval by half. */
const BACKOFF = 1.5;

export const POLL_MIN_MS = 250;
export const POLL_MAX_MS = 2000;
/**
 * 2 % of a core for the rounds: with the doorbell's listing, the sweeps and
 * the timers, an idle daemon stays under the 5 % it is allowed (issue 32).
 */
export const POLL_CPU_SHARE = 0.02;
/** A round at least once a minute, whatever it costs: the latency of a writer that does not ring. */
export const POLL_CAP_MS = 60_000;

/** This process's CPU time so far, ms. */
const processCpuMs = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

/**
 * The CPU time of a round made in slices (its slices only, not what runs
 * between them), for rounds that keep to a share of a core: this one's and
 * the stray pickup's (stray-pickup.ts).
 */
export class SliceMeter {
  private cpu = 0;
  private from: number;

  constructor(private readonly cpuMs: () => number = processCpuMs) {
    this.from = cpuMs();
  }

  /** Ends a slice: its CPU is counted, the next turn awaited, and the next slice begins. */
  async pause(next: () => Promise<void>): Promise<void> {
    this.cpu += this.cpuMs() - this.from;
    await next();
    this.from = this.cpuMs();
  }

  /** Ends the last slice; the round's CPU time, ms. */
  end(): number {
    this.cpu += this.cpuMs() - this.from;
    return this.cpu;
  }
}

/** The wait before the next round: at least `baseMs`, and what keeps rounds of `cpuMs` under `share` of a core, up to `capMs`. */
export function spacedMs(baseMs: number, cpuMs: number, share = POLL_CPU_SHARE, capMs = POLL_CAP_MS): number {
  return Math.max(baseMs, Math.min(capMs, cpuMs / share));
}

export class PollWatches extends EventEmitter {
  private readonly seen = new Map<string, string>();
  private closed = false;
  private cancel: (() => void) | null = null;
  private intervalMs: number;
  /** Rounds done (tests, benchmarks). */
  rounds = 0;
  /** The CPU time of the last round, ms (its slices only: not the work between them). */
  lastRoundCpuMs = 0;

  constructor(private readonly o: PollWatchesOptions) {
    super();
    this.intervalMs = o.minMs ?? POLL_MIN_MS;
  }

  /** Starts the rounds; the first (which only records) runs on a later turn, so 'ready' never comes from start(). */
  start(): void {
    setImmediate(() => void this.round(true));
  }

  /** The stats that stand for a session's state: a change in any is a hint. */
  private stamp(id: string): string {
    const dir = this.o.sessionsDir + path.sep + id + path.sep;
    const e = fs.statSync(dir + 'events.jsonl', { throwIfNoEntry: false });
    const w = fs.statSync(dir + 'wake-queue.jsonl', { throwIfNoEntry: false });
    const i = fs.statSync(dir + 'inbox', { throwIfNoEntry: false });
    return `${e?.size ?? -1}:${e?.mtimeMs ?? -1}:${w?.size ?? -1}:${w?.mtimeMs ?? -1}:${i?.mtimeMs ?? -1}`;
  }

  private async round(first: boolean): Promise<void> {
    if (this.closed) return;
    let changed = false;
    const meter = new SliceMeter(this.o.cpuMs);
    try {
      const ids = listSessionIds(this.o.sessionsDir);
      const present = new Set(ids);
      for (const id of [...this.seen.keys()]) {
        if (present.has(id)) continue;
        this.seen.delete(id);
        changed = true;
        if (!first) this.o.onGone(id);
      }
      for (let i = 0; i < ids.length; i++) {
        if (i > 0 && i % SLICE === 0) {
          await meter.pause(this.o.nextTurn ?? nextTurn);
          if (this.closed) return;
        }
        const id = ids[i] as string;
        const known = this.seen.has(id);
        if (known && this.o.owns && !this.o.owns(id)) continue;
        const s = this.o.owns && !this.o.owns(id) ? '' : this.stamp(id);
        if (known && this.seen.get(id) === s) continue;
        this.seen.set(id, s);
        changed = true;
        if (!first) this.o.onHint(id);
      }
    } catch (e) {
      this.emit('error', e);
    }
    const cpu = meter.end();
    this.lastRoundCpuMs = cpu;
    this.rounds += 1;
    if (this.closed) return;
    if (first) this.emit('ready');
    const adaptive = changed && !first ? (this.o.minMs ?? POLL_MIN_MS) : Math.min(this.o.maxMs ?? POLL_MAX_MS, this.intervalMs * BACKOFF);
    this.intervalMs = spacedMs(adaptive, cpu, this.o.cpuShare, this.o.capMs);
    this.cancel = this.o.clock.setTimer(this.intervalMs, () => void this.round(false));
  }

  /** The interval before the next round, ms (tests). */
  get nextIntervalMs(): number {
    return this.intervalMs;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.cancel?.();
    this.cancel = null;
  }
}
