/**
 * Recovery of a move cut short (inbox.ts, step 2): before the first append of
 * .taking files, `.taking/.append` records where the log ended; after a crash,
 * the log is read from there and each file's stamped lines counted, so only
 * what is missing is appended again.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import { at, READ_FLAGS } from '../sandbox/beneath.js';
import { MAX_LINE_BYTES, readLines, type Cursor } from './jsonl.js';
import { readUpTo, stampOf, utf8, type Entry } from './inbox-file.js';

const codeOf = (e: unknown): string => (e as NodeJS.ErrnoException)?.code ?? (e instanceof Error ? e.message : String(e));
export const MARKER = '.append';
/** Lines read per step of the recovery scan. */
const SCAN_BATCH = 4096;

/** A file being moved: its entries and how many of them the log already has. */
export interface Taken {
  id: string;
  entries: Entry[];
  /** Indexes (0-based) of the object entries, in order. */
  objects: number[];
  /** Entries already in the log (a prefix, found by recovery). */
  done: number;
}

/** unlink(2): never follows a symlink; already gone is fine. */
export function unlinkIfThere(p: string): void {
  try {
    fs.unlinkSync(p);
  } catch (e) {
    if (codeOf(e) !== 'ENOENT') throw e;
  }
}

/** Makes a directory's renames and unlinks durable. A file system that cannot sync a directory (EINVAL) has nothing more to give. */
export function syncDir(fd: number): void {
  try {
    fs.fsyncSync(fd);
  } catch (e) {
    if (codeOf(e) !== 'EINVAL' && codeOf(e) !== 'ENOTSUP') throw e;
  }
}

export interface Marker {
  ino: number;
  offset: number;
}

/**
 * .append says an append of .taking files may have started at or after
 * `offset` in the log whose inode is `ino`. One that is not whole can only
 * have been cut short while being written, before any append began: ignored.
 */
export function readMarker(taking: number): Marker | null {
  let fd: number;
  try {
    fd = fs.openSync(at(taking, MARKER), READ_FLAGS);
  } catch (e) {
    if (codeOf(e) === 'ELOOP') unlinkIfThere(at(taking, MARKER)); // a symlink: not ours
    return null;
  }
  try {
    if (!fs.fstatSync(fd).isFile()) {
      // Not ours (a directory or FIFO someone made): set it aside, so the marker can be written.
      fs.renameSync(at(taking, MARKER), at(taking, `.junk-${crypto.randomBytes(6).toString('hex')}`));
      return null;
    }
    const m = /^(\d{1,15}) (\d{1,15})\n$/.exec(readUpTo(fd, 64).toString('latin1'));
    return m ? { ino: Number(m[1]), offset: Number(m[2]) } : null;
  } finally {
    fs.closeSync(fd);
  }
}

/** Records where the log ends now, on disk before the append that follows (the log only grows from here). */
export function writeMarker(taking: number, events: string): void {
  let ino = 0;
  let size = 0;
  try {
    const st = fs.statSync(events);
    [ino, size] = [st.ino, st.size];
  } catch (e) {
    if (codeOf(e) !== 'ENOENT') throw e;
  }
  // Written to a fresh name and renamed over .append: whatever was at .append (not ours) cannot make this fail.
  const C = fs.constants;
  const tmp = `.append-${crypto.randomBytes(6).toString('hex')}`;
  const fd = fs.openSync(at(taking, tmp), C.O_WRONLY | C.O_CREAT | C.O_EXCL | C.O_NOFOLLOW | C.O_NONBLOCK | C.O_NOCTTY, 0o644);
  try {
    fs.writeSync(fd, `${ino} ${size}\n`);
    fs.fdatasyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  try {
    fs.renameSync(at(taking, tmp), at(taking, MARKER));
  } catch (e) {
    // a directory there: move it aside and try once more
    fs.renameSync(at(taking, MARKER), at(taking, `.junk-${crypto.randomBytes(6).toString('hex')}`));
    fs.renameSync(at(taking, tmp), at(taking, MARKER));
    if (codeOf(e) !== 'EISDIR' && codeOf(e) !== 'ENOTEMPTY' && codeOf(e) !== 'EEXIST') throw e;
  }
  syncDir(taking);
}

/**
 * Recovery: reads the log from the marker and sets each file's `done` to
 * how many of its entries are in (see the module comment).
 */
export function findDone(events: string, marker: Marker, files: Taken[]): void {
  const byId = new Map(files.map((f) => [f.id, { f, stamped: 0, raw: 0 }]));
  // After a file's stamped line, the same write goes on with its next entries, verbatim.
  let follow: { s: { f: Taken; stamped: number; raw: number }; next: number } | null = null;
  const visit = (text: string) => {
    const id = stampOf(text);
    const s = id === null ? undefined : byId.get(id);
    if (s) {
      s.stamped += 1;
      const at = s.f.objects[Math.min(s.stamped, s.f.objects.length) - 1] as number;
      follow = { s, next: at + 1 };
      return;
    }
    const e = follow ? follow.s.f.entries[follow.next] : undefined;
    if (follow && e && !e.object && e.text === text) {
      follow.next += 1;
      follow.s.raw = Math.max(follow.s.raw, follow.next);
    } else {
      follow = null;
    }
  };
  let cur: Cursor = { offset: marker.offset, line: 0, ino: marker.ino };
  for (;;) {
    const r = readLines(events, cur, { maxLines: SCAN_BATCH });
    for (const l of r.lines) if (!l.oversize && !l.badUtf8) visit(l.text);
    cur = r.cursor;
    if (r.lines.length < SCAN_BATCH) {
      // A line of ours whose "\n" the crash kept out of the log is whole all the same: the next append ends it.
      if (r.heldBack > 0 && r.heldBack <= MAX_LINE_BYTES) visit(readTail(events, cur.offset));
      break;
    }
  }
  for (const s of byId.values()) {
    const lastStamped = s.stamped === 0 ? 0 : (s.f.objects[Math.min(s.stamped, s.f.objects.length) - 1] as number) + 1;
    s.f.done = Math.max(lastStamped, s.raw);
  }
}

function readTail(file: string, offset: number): string {
  const fd = fs.openSync(file, 'r');
  try {
    const size = fs.fstatSync(fd).size;
    const buf = Buffer.alloc(Math.max(0, size - offset));
    fs.readSync(fd, buf, 0, buf.length, offset);
    return utf8.decode(buf);
  } catch {
    return '';
  } finally {
    fs.closeSync(fd);
  }
}
