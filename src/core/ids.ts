/**
 * Identifiers. Session ids are UUIDv7 (RFC 9562): 48 bits of Unix milliseconds,
 * then random bits, so they sort by creation time. Event, wake and run ids are
 * a prefix plus the same 32 hex digits, so they also sort by time.
 */
import { randomBytes } from 'node:crypto';

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

let lastMs = 0;
let seq = 0;

/** UUIDv7 with a 12-bit counter in rand_a so ids minted in the same millisecond stay ordered. */
export function uuidv7(nowMs: number = Date.now()): string {
  if (nowMs <= lastMs) {
    seq = (seq + 1) & 0xfff;
    if (seq === 0) lastMs += 1; // counter wrapped: borrow the next millisecond
    nowMs = lastMs;
  } else {
    lastMs = nowMs;
    seq = randomBytes(2).readUInt16BE(0) & 0x7ff; // leave headroom for the counter
  }
  const b = randomBytes(16);
  b.writeUIntBE(nowMs, 0, 6);
  b[6] = 0x70 | (seq >> 8);
  b[7] = seq & 0xff;
  b[8] = ((b[8] ?? 0) & 0x3f) | 0x80;
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

export function systemIds(nowMs: () => number = Date.now): Ids {
  const hex = () => uuidv7(nowMs()).replaceAll('-', '');
  return {
    uuid: () => uuidv7(nowMs()),
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
