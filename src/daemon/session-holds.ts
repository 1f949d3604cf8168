/**
 * What holds a session back from running now, as the daemon sees it — kept
 * apart from the queue that runs sessions, so each reads on its own.
 *
 * - Held until a time: another process holds the lease (busy), or the
 *   session spins (runs in a row that take nothing in back off like failing
 *   runs: backoff.ts, up to 2 s doubling to 5 min).
 * - Held by a broken definition: the last run rescheduled with
 *   `invalid_definition`. A change under agents/ or environments/ releases
 *   it, and it runs at once, its backoff skipped (retry now).
 * - An inbox drain that changed nothing (a file it cannot move, a marker it
 *   cannot write) is not work: draining again at once would only report the
 *   same problem and wake the daemon with that report, in a loop. It counts
 *   again when the inbox changes, or after a sweep period.
 *
 * Everything here is memory of this process, and all of it is a brake, never
 * a decision the files do not back: a restart forgets it, and the next runs
 * find the same causes in the files and rebuild it. Time is read from the
 * injected clock only; this module arms no timers (the daemon's DueScheduler
 * wakes a held session when its hold ends).
 */
import type { Clock } from '../core/foundation/clock.js';
import { backoffMs } from '../core/run/backoff.js';
import { planRun } from '../core/run/plan.js';
import type { WakeResult } from '../core/run/wake-api.js';
import type { SessionSnapshot } from '../core/schema/index.js';
import { inboxSignature } from '../core/store/inbox.js';
import type { SessionStore } from '../core/store/session-store.js';

export interface SessionHoldsDeps {
  clock: Clock;
  /** Jitter of the spin backoff: a number in [0, 1] (deps.random). */
  random: () => number;
  /** The sweep period, ms: an inbox left unchanged by a drain is tried again after it. */
  sweepMs: number;
  store: Pick<SessionStore, 'paths' | 'snapshot'>;
}

/** What a run took with it as it began; handed back to `end`. */
export interface RunBegun {
  /** Whether the run skips the session's backoff (its cause was fixed). */
  retryNow: boolean;
  /** The inbox's signature before the run (null: nothing in it). */
  inboxBefore: string | null;
}

/** Two runs in a row without progress are a spin; the backoff counts from the third. */
const SPIN_RUNS = 2;

export class SessionHolds {
  /** Not run before this time (ms): a busy lease, or a spin. */
  private readonly blockedUntil = new Map<string, number>();
  /** Executed runs in a row that took nothing in (no events, no revisits). */
  private readonly idleRuns = new Map<string, number>();
  /** Backing off because their agent or environment did not load. */
  private readonly heldByDefinitions = new Set<string>();
  /** To run now, backoff or not (their cause was fixed); consumed by the next run. */
  private readonly retryNow = new Set<string>();
  /** Whose last drain left inbox/ unchanged: its signature then, and when. */
  private readonly stuckInboxes = new Map<string, { sig: string; at: number }>();

  constructor(private readonly d: SessionHoldsDeps) {}

  /** Takes in what a fresh snapshot says: whether a broken definition holds the session back. */
  observe(id: string, snap: SessionSnapshot): void {
    if (snap.status === 'rescheduling' && snap.last_error?.code === 'invalid_definition') this.heldByDefinitions.add(id);
    else this.heldByDefinitions.delete(id);
  }

  /** When the session may run again, if that is after `now`; a hold that has passed is dropped and gives undefined. */
  heldUntil(id: string, now: number): number | undefined {
    const until = this.blockedUntil.get(id);
    if (until !== undefined && until > now) return until;
    this.blockedUntil.delete(id);
    return undefined;
  }

  /** Holds the session back until `until` (ms): its lease is held elsewhere. */
  holdUntil(id: string, until: number): void {
    this.blockedUntil.set(id, until);
  }

  /** The lease that held the session back is gone (lease-watch.ts): it may run now. */
  releaseHold(id: string): void {
    this.blockedUntil.delete(id);
  }

  /** Whether the session is to run now, backoff or not. Does not consume the mark. */
  retriesNow(id: string): boolean {
    return this.retryNow.has(id);
  }

  /**
   * Whether the session's inbox/ has something a drain could take. Not when
   * the last drain left it exactly as it was, until it changes or a sweep
   * period has passed.
   */
  inboxWork(id: string): boolean {
    const sig = inboxSignature(this.d.store.paths(id));
    if (sig === null) {
      this.stuckInboxes.delete(id);
      return false;
    }
    const stuck = this.stuckInboxes.get(id);
    return !stuck || stuck.sig !== sig || this.d.clock.now() - stuck.at >= this.d.sweepMs;
  }

  /** Whether the last drain left the session's inbox/ as it was (the sweep lists such an inbox every time). */
  inboxStuck(id: string): boolean {
    return this.stuckInboxes.has(id);
  }

  /** The sessions whose last drain left their inbox/ as it was. */
  stuckInboxIds(): Iterable<string> {
    return this.stuckInboxes.keys();
  }

  /**
   * A definition changed: every session a broken definition held back is
   * released, to run at once with its backoff skipped. Returns their ids;
   * the caller queues them.
   */
  releaseDefinitions(): string[] {
    const ids = [...this.heldByDefinitions];
    for (const id of ids) {
      this.retryNow.add(id);
      this.blockedUntil.delete(id);
    }
    return ids;
  }

  /** Call as a run begins: consumes the retry-now mark and notes the inbox as it stands. */
  begin(id: string): RunBegun {
    const inboxBefore = inboxSignature(this.d.store.paths(id));
    return { retryNow: this.retryNow.delete(id), inboxBefore };
  }

  /**
   * Call when a run is over, `result` null when wake() threw. The inbox is
   * stuck only when a drain ran (any wake that returned did; a busy lease
   * did not) and left it as it was; an empty inbox cannot be stuck. An
   * executed run counts toward a spin unless it took something in, and so
   * does a wake that `failed` (threw anything but busy or not_found: it
   * took nothing in, and if it could not even record its failure, nothing
   * else would stop the next run from failing the same way at once).
   */
  end(id: string, begun: RunBegun, result: WakeResult | null, failed = false): void {
    const inboxAfter = begun.inboxBefore === null || result === null ? null : inboxSignature(this.d.store.paths(id));
    if (inboxAfter !== null && inboxAfter === begun.inboxBefore) this.stuckInboxes.set(id, { sig: inboxAfter, at: this.d.clock.now() });
    else this.stuckInboxes.delete(id);
    if (failed) this.idleRuns.set(id, (this.idleRuns.get(id) ?? 0) + 1);
    else if (result?.outcome === 'executed') {
      const progress = result.processed_event_ids.length > 0 || result.wakes_consumed.length > 0;
      if (progress) this.idleRuns.delete(id);
      else this.idleRuns.set(id, (this.idleRuns.get(id) ?? 0) + 1);
    }
  }

  /**
   * A session that ran twice in a row without taking anything in, and would
   * run again at once, is spinning (a failure that repeats before any
   * progress): it is held back like a failing run. Returns the hold it set,
   * with the runs that led to it, or null when it is not spinning (or its
   * snapshot cannot be read: the next look decides).
   */
  guardSpin(id: string): { runs: number; until: number } | null {
    const runs = this.idleRuns.get(id) ?? 0;
    if (runs < SPIN_RUNS) return null;
    let again = false;
    try {
      again = planRun(this.d.store.snapshot(id, { persist: false }), this.d.clock.now(), {}).runnable;
    } catch {
      return null;
    }
    if (!again) return null;
    const until = this.d.clock.now() + backoffMs(runs - SPIN_RUNS, this.d.random);
    this.blockedUntil.set(id, until);
    return { runs, until };
  }

  /** The session is gone: its holds are dropped. (Its spin count stays; a run that takes something in clears it.) */
  forget(id: string): void {
    this.stuckInboxes.delete(id);
    this.heldByDefinitions.delete(id);
    this.retryNow.delete(id);
    this.blockedUntil.delete(id);
  }
}
