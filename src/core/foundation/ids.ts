/**
 * Identifiers. Session ids are UUIDv7 (RFC 9562): 48 bits of Unix milliseconds,
 * then a counter and random bits, so they sort by creation time. Event, wake
 * and run ids are a prefix plus the same 32 hex digits, so they also sort by
 * time.
 *
 * The bit layout is the `uuid` package's (v7 with `msecs` and `seq`). Given
 * those options it keeps no state of its own, so the ordering is kept here,
 * per minter: within one millisecond, or when the clock steps back, the
 * 32-bit `seq` counts up from where it was under the highest millisecond seen
 * so far, and every id sorts after the one before it. The counter starts at a
 * random 31-bit value in each new millisecond, which leaves at least 2^31 ids
 * before it wraps (it then borrows the next millisecond, as uuid itself does).
 */
import { randomBytes } from 'node:crypto';
import { v7 } from 'uuid';

export interface Ids {
  /** A new UUIDv7 string. */
  uuid(): string;
  /** `sevt_...` for events. */
  event(): string;
  /** `wake_...` for scheduled revisits. */
  wake(): string;
  /** `wrun_...` for one run of wake(). */
  run(): string;
}

/**
 * A UUIDv7 minter with its own ordering state: each call returns an id that
 * sorts strictly after every id it returned before, whatever `nowMs` says.
 */
export function uuidv7Minter(): (nowMs: number) => string {
  let msecs = -Infinity;
  let seq = 0;
  return (nowMs) => {
    const now = Math.trunc(nowMs);
    if (now > msecs) {
      msecs = now;
      seq = randomBytes(4).readUInt32BE(0) >>> 1;
    } else {
      seq = (seq + 1) >>> 0;
      if (seq === 0) msecs += 1; // 2^32 ids in one millisecond: borrow the next one
    }
    return v7({ msecs, seq });
  };
}

const shared = uuidv7Minter();

/** One UUIDv7 from a process-wide minter (scripts and benchmarks; the runtime uses its Ids). */
export function uuidv7(nowMs: number = Date.now()): string {
  return shared(nowMs);
}

/** Ids for one runtime: every id it mints, of any kind, sorts after the last one it minted. */
export function systemIds(nowMs: () => number = Date.now): Ids {
  const mint = uuidv7Minter();
  const hex = () => mint(nowMs()).replaceAll('-', '');
  return {
    uuid: () => mint(nowMs()),
    event: () => `sevt_${hex()}`,
    wake: () => `wake_${hex()}`,
    run: () => `wrun_${hex()}`,
  };
}

/** The id of a hand-written event that has none: its 1-based line number. */
export const lineEventId = (line: number) => `sevt_line_${line}`;
export const lineWakeId = (line: number) => `wake_line_${line}`;

/** Run ids as the runtime mints them: `wrun_` and a UUIDv7 in hex, so they sort by time. */
export const RUN_ID = /^wrun_[0-9a-f]{32}$/;

/**
 * `id`, unless it does not sort after `last` (the clock stepped back, or
 * another machine's clock is ahead): then the run id right after `last`.
 * The log accepts a run only with a run id newer than every run before it.
 */
export function runIdAfter(id: string, last: string | null): string {
  if (last === null || !RUN_ID.test(last) || id > last) return id;
  const next = (BigInt(`0x${last.slice(5)}`) + 1n).toString(16).padStart(32, '0');
  // Past the largest id nothing is newer; the log will refuse the run, and say so.
  return next.length > 32 ? id : `wrun_${next}`;
}
