/**
 * The listings of inbox/ and inbox/.taking that the drain (inbox.ts) and the
 * looks before it need, at a cost that anyone who can deliver to a session
 * cannot blow up: names are read as the directory's bytes (a name need not
 * be UTF-8), a yes/no stops at the first name that answers it, and a full
 * listing keeps only how many names there are and the first `max` in byte
 * order (what a drain takes from), never all of them, never sorted.
 */
import fs from 'node:fs';
import { isUtf8 } from 'node:buffer';
import { fdPath } from '../sandbox/beneath.js';

/** A drain's entry in .taking: a UUID, "-", the writer's name. Anything else in .taking is left alone. */
const TAKING_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}-/;

/**
 * Names are read as latin1 text: one character per byte, so a name's text
 * is its bytes whatever they are (a name need not be UTF-8), it compares in
 * byte order, and it costs less to make than a Buffer. Only the names kept
 * are turned back into bytes.
 */
type Latin1 = string;

/** A name in inbox/ a writer renamed in (one starting with "." is being written, or is the drain's). */
const isFresh = (name: Latin1): boolean => name.charCodeAt(0) !== 0x2e;
/** Only a name that starts with the bytes of a UUID and "-" reads as one. */
const isTakingEntry = (name: Latin1): boolean => TAKING_ID.test(name);

/** How many names, and the first `max` of them in byte order, as the directory's bytes. */
export interface FirstNames {
  count: number;
  first: Buffer[];
}

/** Counts names and keeps the first `max` in byte order: one comparison for most names, never a sort of them all. */
class Tally {
  count = 0;
  private readonly kept: Latin1[] = [];
  constructor(private readonly max: number) {}

  add(name: Latin1): void {
    this.count += 1;
    const k = this.kept;
    if (k.length === this.max && (this.max === 0 || name >= k[k.length - 1]!)) return;
    let lo = 0;
    let hi = k.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (k[mid]! < name) lo = mid + 1;
      else hi = mid;
    }
    k.splice(lo, 0, name);
    if (k.length > this.max) k.pop();
  }

  done(): FirstNames {
    return { count: this.count, first: this.kept.map((n) => Buffer.from(n, 'latin1')) };
  }
}

/** Names in inbox/ not starting with ".": how many, and the first `max` in byte order (the order a drain takes them in). */
export function freshNames(inbox: number, max: number): FirstNames {
  const out = new Tally(max);
  eachName(inbox, (name) => {
    if (isFresh(name)) out.add(name);
    return false;
  });
  return out.done();
}

export interface TakingEntries {
  /** The drain's own entries: how many, and the first `max` (oldest first: the UUIDs are v7). */
  ids: FirstNames;
  /** Entries named like the drain's whose name is not UTF-8 (no drain makes one): how many, and the first `max`. */
  odd: FirstNames;
}

/** The entries of .taking named `<uuid>-<name>`. */
export function takingEntries(taking: number, max: number): TakingEntries {
  const ids = new Tally(max);
  const odd = new Tally(max);
  eachName(taking, (name) => {
    if (isTakingEntry(name)) (isUtf8(Buffer.from(name, 'latin1')) ? ids : odd).add(name);
    return false;
  });
  return { ids: ids.done(), odd: odd.done() };
}

/** Whether inbox/ holds a name not starting with ".": stops at the first. */
export function hasFreshName(inbox: number): boolean {
  return eachName(inbox, isFresh, 32);
}

/** Whether .taking holds an entry named `<uuid>-<name>`: stops at the first. */
export function hasTakingEntry(taking: number): boolean {
  return eachName(taking, isTakingEntry, 32);
}

/**
 * Reads the directory an entry at a time, from batches of `batch` (never
 * all of it at once), until `stop` says so; returns whether it did. A small
 * batch for a yes/no that the first names usually answer, a larger one for
 * a whole listing.
 */
function eachName(dir: number, stop: (name: Latin1) => boolean, batch = 256): boolean {
  const d = fs.opendirSync(fdPath(dir), { encoding: 'latin1', bufferSize: batch });
  try {
    for (let e = d.readSync(); e; e = d.readSync()) if (stop(e.name)) return true;
    return false;
  } finally {
    d.closeSync();
  }
}
