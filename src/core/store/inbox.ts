/**
 * inbox/: an ingress that is atomic for any size and any number of writers.
 *
 * `echo ... >> events.jsonl` is atomic only for one write: bash writes a
 * line longer than its buffer in several write(2) calls, and concurrent
 * writers then interleave. A file renamed into `inbox/` appears whole or
 * not at all, so a writer writes it anywhere on the same file system (a
 * name starting with "." inside inbox/ is ignored) and renames it in.
 *
 * drainInbox() moves inbox files into events.jsonl, exactly once per line,
 * and must run under the session lease (wake() calls it first thing). It
 * holds inbox/ and inbox/.taking/ open as directories (never through a
 * symlink) and does every listing, open, rename and unlink relative to those
 * descriptors (beneath.ts), so no symlink or rename elsewhere can point it at
 * another directory. Each file goes through these steps, each safe to crash
 * after (directories are fsynced after each step's renames and unlinks):
 *
 *  1. rename inbox/<name> to inbox/.taking/<uuid>-<name>: the name is free
 *     again for its writer, and the file has an identity (its "id") no one
 *     else uses;
 *  2. once per drain, before the first append, write inbox/.taking/.append:
 *     the log's inode and size, durably, so a later drain knows where the
 *     lines of any file still in .taking can be;
 *  3. append its lines to events.jsonl in one write (all files of a drain
 *     together), each JSON object stamped by appending `"inbox":"<id>"` as
 *     its last key (JSON.parse keeps the last of duplicate keys, so the
 *     writer's own "inbox" key cannot win; and a line cut short by a crash
 *     never ends with the stamp);
 *  4. unlink the .taking file; .append goes once .taking holds no file.
 *
 * Recovery (a file in .taking when .append exists): the log is read from the
 * recorded offset, and the file's stamped lines there are counted. A file's
 * lines are always appended in order, from where the last append stopped, so
 * c complete stamped lines mean its first c objects are in; a non-object line
 * (it cannot carry a stamp) counts as in when it came before one of those, or
 * right after the last of them in the same write, verbatim. The rest is
 * appended. A file of an older openboa (no .append: whole-file stamps) whose
 * id the fold has seen (SessionSnapshot.inbox_taken) is only unlinked.
 *
 * A file holds one JSON object (pretty-printed or not) or JSONL lines; blank
 * lines are skipped and a non-object line is appended as it is (the log
 * reports it). What is not a regular file, has more than one link, is
 * too large, is not UTF-8, holds no event, or nests deeper than a journal
 * line may is refused: renamed `inbox/.refused-<name>` (a suffix when that
 * exists) and reported once, when refused. So is inbox/ or inbox/.taking when
 * it is not a real directory (renamed `.refused-inbox`, `.refused-.taking`).
 * A file that looks unfinished (empty, not UTF-8, or not ending in "\n" with
 * a last line that is not JSON) and was modified less than quietMs ago is
 * left in .taking for a later drain: a writer may still be writing it in
 * place. Renamed files are never held back: nothing would wake the daemon
 * when the wait ends (docs/format.md, "inbox/").
 */
import fs from 'node:fs';
import path from 'node:path';
import type { SessionPaths } from '../home.js';
import type { Ids } from '../ids.js';
import { at, closeQuietly, DIR_FLAGS, fdPath, READ_FLAGS } from '../sandbox/beneath.js';
import { appendLines, MAX_LINE_BYTES, readLines, type Cursor } from './jsonl.js';
import { MAX_JSON_DEPTH, pathTooDeep } from './parse-line.js';

/** Files taken per drain (renamed in plus still in .taking); the rest wait for the next one (the daemon looks again after every run). */
export const MAX_INBOX_FILES = 256;
/**
 * Bytes appended per drain, stamps included. A file that alone would write
 * more is refused. Also keeps the one string the append joins well under
 * V8's limit on a string's length (2^29 characters).
 */
const MAX_DRAIN_BYTES = 256 * 1024 * 1024;
/**
 * How long a file that looks unfinished must have been left alone before it
 * is judged as it is: the same grace an append gives a half-written last line
 * of events.jsonl (SEAL_GRACE_MS in jsonl.ts).
 */
export const INBOX_QUIET_MS = 250;

const TAKING = '.taking';
const MARKER = '.append';
const REFUSED = '.refused-';
/** A .taking entry the drain made: a UUID, "-", the writer's name. Anything else in .taking is left alone. */
const TAKING_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}-/;
const UUID_PREFIX = 37;
/** Bytes in a file name (Linux NAME_MAX). */
const NAME_MAX = 255;
/** Log lines read at a time when recovering. */
const SCAN_BATCH = 4096;

export interface DrainResult {
  /** Files moved into the log (or found already moved, and removed). */
  files: number;
  /** Lines appended. */
  lines: number;
  /** Files left in .taking because they look unfinished and were modified within quietMs. */
  deferred: number;
  /** What was refused by this drain (each refusal once), in words. */
  problems: string[];
}

export interface DrainOptions {
  /** Wall-clock ms, compared with files' mtimes (default Date.now: file times are real, whatever clock a run uses). */
  now?: () => number;
  /** Default INBOX_QUIET_MS. */
  quietMs?: number;
  /** Appends the lines (default: appendLines, durably). Tests pass one that stops part-way, standing for a kill -9 during the write. */
  append?: (file: string, lines: readonly string[]) => void;
}

const codeOf = (e: unknown): string => (e as NodeJS.ErrnoException)?.code ?? (e instanceof Error ? e.message : String(e));
const notADirectory = (e: unknown) => codeOf(e) === 'ELOOP' || codeOf(e) === 'ENOTDIR';

/** Whether drainInbox has anything to do: files to take, or an inbox/ or .taking to refuse. Never throws. */
export function inboxHasFiles(paths: SessionPaths): boolean {
  let inbox: number | null = null;
  let taking: number | null = null;
  try {
    try {
      inbox = fs.openSync(paths.inbox, DIR_FLAGS);
    } catch (e) {
      return notADirectory(e);
    }
    if (freshNames(inbox).length > 0) return true;
    try {
      taking = fs.openSync(at(inbox, TAKING), DIR_FLAGS);
    } catch (e) {
      return notADirectory(e);
    }
    return takingIds(taking).length > 0;
  } catch {
    return false;
  } finally {
    closeQuietly(taking);
    closeQuietly(inbox);
  }
}

/** Names in inbox/ not starting with ".", as the bytes the directory holds (a name need not be UTF-8), in byte order. */
function freshNames(inbox: number): Buffer[] {
  return fs
    .readdirSync(fdPath(inbox), { encoding: 'buffer' })
    .filter((n) => n[0] !== 0x2e)
    .sort(Buffer.compare);
}

/** The drain's own entries in .taking, oldest first (the UUIDs are v7). */
function takingIds(taking: number): string[] {
  return fs
    .readdirSync(fdPath(taking))
    .filter((n) => TAKING_ID.test(n) && Buffer.from(n).length <= NAME_MAX)
    .sort();
}

/**
 * Moves inbox files into the log (see the module comment). `taken` is the
 * snapshot's inbox_taken, read under the same lease (only files an older
 * openboa left need it). Never throws: what goes wrong is in `problems`.
 */
export function drainInbox(paths: SessionPaths, ids: Pick<Ids, 'uuid'>, taken: readonly string[], opts: DrainOptions = {}): DrainResult {
  const result: DrainResult = { files: 0, lines: 0, deferred: 0, problems: [] };
  let inbox: number | null = null;
  let taking: number | null = null;
  try {
    try {
      inbox = fs.openSync(paths.inbox, DIR_FLAGS);
    } catch (e) {
      if (notADirectory(e)) refuseInboxDir(paths.inbox, result);
      else if (codeOf(e) !== 'ENOENT') result.problems.push(`inbox/: cannot be opened (${codeOf(e)}); nothing was taken`);
      return result;
    }
    const fresh = freshNames(inbox);
    taking = openTaking(inbox, fresh.length > 0, result);
    if (taking === null) return result;
    const t = taking;
    const waiting = takingIds(t).length;
    let renamed = 0;
    for (const raw of fresh.slice(0, Math.max(0, MAX_INBOX_FILES - waiting))) {
      try {
        fs.renameSync(rawAt(inbox, raw), at(t, `${ids.uuid()}-${fit(new TextDecoder().decode(raw), NAME_MAX - UUID_PREFIX)}`));
        renamed += 1;
      } catch {
        // gone meanwhile: nothing to take
      }
    }
    if (renamed > 0) {
      // The new names first, then the old ones gone: a power loss cannot bring back a file already appended.
      syncDir(t);
      syncDir(inbox);
    }
    take(paths, inbox, t, new Set(taken), opts, result);
  } catch (e) {
    result.problems.push(`inbox/: the move stopped (${codeOf(e)}); what is left is taken by the next run`);
  } finally {
    closeQuietly(taking);
    closeQuietly(inbox);
  }
  return result;
}

/** inbox/ is a symlink or a file: set it aside, make a real one, take nothing. */
function refuseInboxDir(inboxPath: string, result: DrainResult): void {
  let parent: number | null = null;
  try {
    parent = fs.openSync(path.dirname(inboxPath), DIR_FLAGS);
    const name = freeName(parent, `${REFUSED}inbox`);
    fs.renameSync(at(parent, path.basename(inboxPath)), at(parent, name));
    fs.mkdirSync(at(parent, path.basename(inboxPath)));
    syncDir(parent);
    result.problems.push(`inbox/ is not a directory (a symlink or a file); nothing was taken through it; it was renamed ${name} and an empty inbox/ made`);
  } catch (e) {
    result.problems.push(`inbox/ is not a directory (a symlink or a file), and could not be set aside (${codeOf(e)}); nothing was taken`);
  } finally {
    closeQuietly(parent);
  }
}

/** Opens inbox/.taking, making it when there is something to take; null when there is nothing to do or it was refused. */
function openTaking(inbox: number, needed: boolean, result: DrainResult): number | null {
  try {
    return fs.openSync(at(inbox, TAKING), DIR_FLAGS);
  } catch (e) {
    if (codeOf(e) === 'ENOENT') {
      if (!needed) return null;
      try {
        fs.mkdirSync(at(inbox, TAKING));
      } catch (e2) {
        if (codeOf(e2) !== 'EEXIST') throw e2;
      }
      return fs.openSync(at(inbox, TAKING), DIR_FLAGS);
    }
    if (!notADirectory(e)) throw e;
  }
  try {
    const name = freeName(inbox, `${REFUSED}${TAKING}`);
    fs.renameSync(at(inbox, TAKING), at(inbox, name));
    syncDir(inbox);
    result.problems.push(`inbox/.taking is not a directory (a symlink or a file); nothing was taken through it; it was renamed inbox/${name}, and inbox/ is taken by the next run`);
  } catch (e) {
    result.problems.push(`inbox/.taking is not a directory (a symlink or a file), and could not be set aside (${codeOf(e)}); nothing was taken`);
  }
  return null;
}

/** One event of a file: the line as it will be appended, and whether it is a JSON object (so it carries the stamp). */
interface Entry {
  text: string;
  object: boolean;
}

interface Taken {
  id: string;
  entries: Entry[];
  /** Indexes (0-based) of the object entries, in order. */
  objects: number[];
  /** Entries already in the log (a prefix, found by recovery). */
  done: number;
}

function take(paths: SessionPaths, inbox: number, taking: number, taken: ReadonlySet<string>, opts: DrainOptions, result: DrainResult): void {
  const now = (opts.now ?? Date.now)();
  const quietMs = opts.quietMs ?? INBOX_QUIET_MS;
  const files: Taken[] = [];
  let bytes = 0;
  for (const id of takingIds(taking).slice(0, MAX_INBOX_FILES)) {
    let got: Prepared;
    try {
      got = prepare(taking, id, now, quietMs);
    } catch (e) {
      got = { kind: 'refuse', why: `could not be read (${codeOf(e)})` };
    }
    if (got.kind === 'gone') continue;
    if (got.kind === 'defer') {
      result.deferred += 1;
      continue;
    }
    if (got.kind === 'refuse') {
      refuse(inbox, taking, id, got.why, result);
      continue;
    }
    if (got.bytes > MAX_DRAIN_BYTES) {
      refuse(inbox, taking, id, `${got.bytes} bytes once each line is stamped, over the ${MAX_DRAIN_BYTES} bytes one move may write`, result);
      continue;
    }
    if (bytes + got.bytes > MAX_DRAIN_BYTES) break; // the next drain takes it
    bytes += got.bytes;
    const objects: number[] = [];
    got.entries.forEach((e, i) => e.object && objects.push(i));
    files.push({ id, entries: got.entries, objects, done: 0 });
  }
  if (files.length === 0) return;

  const marker = readMarker(taking);
  if (marker) findDone(paths.events, marker, files);
  // Moved in by an older openboa (whole-file stamps, no .append): the fold saw its id, so all of it is in.
  for (const f of files) if (f.done === 0 && taken.has(f.id)) f.done = f.entries.length;

  const lines: string[] = [];
  for (const f of files) for (let i = f.done; i < f.entries.length; i++) lines.push((f.entries[i] as Entry).text);
  if (lines.length > 0) {
    if (!marker) writeMarker(taking, paths.events);
    (opts.append ?? ((file, ls) => appendLines(file, ls, { durable: true })))(paths.events, lines);
    result.lines = lines.length;
  }
  for (const f of files) unlinkIfThere(at(taking, f.id));
  syncDir(taking);
  result.files = files.length;
  if (takingIds(taking).length === 0) unlinkIfThere(at(taking, MARKER));
}

type Prepared =
  | { kind: 'gone' }
  | { kind: 'defer' }
  | { kind: 'refuse'; why: string }
  | { kind: 'take'; entries: Entry[]; bytes: number };

/** Reads one .taking file through its descriptor (never a symlink, never blocking on a FIFO) and judges it. */
function prepare(taking: number, id: string, now: number, quietMs: number): Prepared {
  let fd: number;
  try {
    fd = fs.openSync(at(taking, id), READ_FLAGS);
  } catch (e) {
    if (codeOf(e) === 'ENOENT') return { kind: 'gone' };
    return { kind: 'refuse', why: `cannot be read (${codeOf(e)}; a symlink is not followed)` };
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) return { kind: 'refuse', why: 'not a regular file' };
    if (st.nlink > 1) return { kind: 'refuse', why: `has ${st.nlink} hard links; a file linked from elsewhere is not read (rename a file in, do not link it)` };
    const buf = readUpTo(fd, MAX_LINE_BYTES + 1);
    if (buf.length > MAX_LINE_BYTES) return { kind: 'refuse', why: `over the ${MAX_LINE_BYTES}-byte limit of a journal line` };
    const parsed = parseFile(buf, id);
    if (parsed.unfinished && Math.abs(now - st.mtimeMs) < quietMs) return { kind: 'defer' };
    if ('problem' in parsed) return { kind: 'refuse', why: parsed.problem };
    let bytes = 0;
    for (const [i, e] of parsed.entries.entries()) {
      const n = Buffer.byteLength(e.text);
      if (n > MAX_LINE_BYTES) return { kind: 'refuse', why: `event ${i + 1}: over the ${MAX_LINE_BYTES}-byte limit of a journal line once stamped` };
      bytes += n + 1;
    }
    return { kind: 'take', entries: parsed.entries, bytes };
  } finally {
    fs.closeSync(fd);
  }
}

function readUpTo(fd: number, max: number): Buffer {
  const buf = Buffer.allocUnsafe(Math.min(max, 1 << 20));
  const parts: Buffer[] = [];
  let total = 0;
  while (total < max) {
    const n = fs.readSync(fd, buf, 0, Math.min(buf.length, max - total), null);
    if (n <= 0) break;
    parts.push(Buffer.from(buf.subarray(0, n)));
    total += n;
  }
  return Buffer.concat(parts, total);
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * One entry per event: the whole file when it is one JSON object, else each
 * non-blank line. `unfinished`: the file may still be being written (see the
 * module comment).
 */
function parseFile(buf: Buffer, id: string): ({ entries: Entry[] } | { problem: string }) & { unfinished: boolean } {
  let text: string;
  try {
    text = utf8.decode(buf);
  } catch {
    return { problem: 'not valid UTF-8', unfinished: true };
  }
  const whole = text.replace(/^\uFEFF/, '').trim();
  if (whole === '') return { problem: 'holds no event', unfinished: true };
  const tooDeep = (v: unknown, where: string) => {
    const deep = pathTooDeep(v);
    return deep ? `${where}JSON nested more than ${MAX_JSON_DEPTH} levels deep (at ${deep.slice(0, 12).join('.')}${deep.length > 12 ? '.…' : ''}), the limit of a journal line` : null;
  };
  if (whole.startsWith('{')) {
    let v: unknown;
    try {
      v = JSON.parse(whole);
    } catch {
      // not one object: read it as lines
    }
    if (isObject(v)) {
      const deep = tooDeep(v, '');
      if (deep) return { problem: deep, unfinished: false };
      return { entries: [{ text: /[\n\r]/.test(whole) ? compact(whole) : whole, object: true }].map((e) => stampEntry(e, id)), unfinished: false };
    }
  }
  const entries: Entry[] = [];
  let lastParsed = true;
  let no = 0;
  for (const raw of text.replace(/^\uFEFF/, '').split('\n')) {
    no += 1;
    const line = raw.replace(/\r$/, '').replace(/^\uFEFF/, '');
    if (line.trim() === '') continue;
    let v: unknown;
    try {
      v = JSON.parse(line);
      lastParsed = true;
    } catch {
      lastParsed = false;
    }
    if (isObject(v)) {
      const deep = tooDeep(v, `line ${no}: `);
      if (deep) return { problem: deep, unfinished: false };
      entries.push({ text: line.trim(), object: true });
    } else {
      entries.push({ text: line, object: false });
    }
  }
  return { entries: entries.map((e) => stampEntry(e, id)), unfinished: !lastParsed && buf[buf.length - 1] !== 0x0a };
}

/** A valid JSON text without the whitespace between its tokens (a loop, not a walk of the value: any depth costs no stack). */
function compact(json: string): string {
  const out: string[] = [];
  let start = 0;
  let inString = false;
  for (let i = 0; i < json.length; i++) {
    const c = json.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i += 1;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) {
      if (i > start) out.push(json.slice(start, i));
      start = i + 1;
    }
  }
  out.push(json.slice(start));
  return out.join('');
}

/**
 * Adds `"inbox":"<id>"` as the object's last key by editing its text (the
 * object is never re-serialised). Last, because JSON.parse keeps the last of
 * duplicate keys, and because a line cut short never ends with it.
 */
function stampEntry(e: Entry, id: string): Entry {
  if (!e.object) return e;
  const body = e.text.slice(0, -1).trimEnd(); // a JSON object's text ends in "}"
  const stamp = `"inbox":${JSON.stringify(id)}}`;
  return { text: body === '{' ? `{${stamp}` : `${body},${stamp}`, object: true };
}

/** The id of the stamp a whole line ends with, or null. */
function stampOf(text: string): string | null {
  if (!text.endsWith('"}')) return null;
  // The stamp is at most ~1.6 KB: an id of 255 bytes, each escaped to 6 characters at worst.
  const tail = text.length > 4096 ? text.slice(-4096) : text;
  // A '"' inside a JSON string is escaped, so the last `"inbox":` starts the stamp.
  const k = tail.lastIndexOf('"inbox":');
  if (k <= 0 || (tail[k - 1] !== ',' && tail[k - 1] !== '{')) return null;
  try {
    const id: unknown = JSON.parse(tail.slice(k + 8, -1));
    return typeof id === 'string' ? id : null;
  } catch {
    return null;
  }
}

interface Marker {
  ino: number;
  offset: number;
}

/**
 * .append says an append of .taking files may have started at or after
 * `offset` in the log whose inode is `ino`. One that is not whole can only
 * have been cut short while being written, before any append began: ignored.
 */
function readMarker(taking: number): Marker | null {
  let fd: number;
  try {
    fd = fs.openSync(at(taking, MARKER), READ_FLAGS);
  } catch (e) {
    if (codeOf(e) === 'ELOOP') unlinkIfThere(at(taking, MARKER)); // a symlink: not ours
    return null;
  }
  try {
    if (!fs.fstatSync(fd).isFile()) return null;
    const m = /^(\d{1,15}) (\d{1,15})\n$/.exec(readUpTo(fd, 64).toString('latin1'));
    return m ? { ino: Number(m[1]), offset: Number(m[2]) } : null;
  } finally {
    fs.closeSync(fd);
  }
}

/** Records where the log ends now, on disk before the append that follows (the log only grows from here). */
function writeMarker(taking: number, events: string): void {
  let ino = 0;
  let size = 0;
  try {
    const st = fs.statSync(events);
    [ino, size] = [st.ino, st.size];
  } catch (e) {
    if (codeOf(e) !== 'ENOENT') throw e;
  }
  const C = fs.constants;
  const fd = fs.openSync(at(taking, MARKER), C.O_WRONLY | C.O_CREAT | C.O_TRUNC | C.O_NOFOLLOW | C.O_NONBLOCK | C.O_NOCTTY, 0o644);
  try {
    fs.writeSync(fd, `${ino} ${size}\n`);
    fs.fdatasyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  syncDir(taking);
}

/**
 * Recovery: reads the log from the marker and sets each file's `done` to
 * how many of its entries are in (see the module comment).
 */
function findDone(events: string, marker: Marker, files: Taken[]): void {
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

/** Moves a .taking file to inbox/.refused-<name> (never over another) and reports it; the record on disk means it is reported once. */
function refuse(inbox: number, taking: number, id: string, why: string, result: DrainResult): void {
  const name = id.slice(UUID_PREFIX);
  try {
    const to = freeName(inbox, `${REFUSED}${name}`);
    fs.renameSync(at(taking, id), at(inbox, to));
    syncDir(inbox);
    syncDir(taking);
    result.problems.push(`inbox/${name}: ${why}; left as inbox/${to}`);
  } catch (e) {
    result.problems.push(`inbox/${name}: ${why}; could not be set aside (${codeOf(e)}), left as inbox/${TAKING}/${id}`);
  }
}

/**
 * `base`, or `base.2`, `base.3`, ... whichever is free in the directory.
 * Only the lease holder makes `.refused-` names, so none appears between
 * this look and the rename that follows; anyone else who can write in the
 * directory could as well remove the file.
 */
function freeName(dir: number, base: string): string {
  const stem = fit(base, NAME_MAX - 6);
  for (let k = 1; k < 10_000; k++) {
    const name = k === 1 ? stem : `${stem}.${k}`;
    try {
      fs.lstatSync(at(dir, name));
    } catch (e) {
      if (codeOf(e) === 'ENOENT') return name;
      throw e;
    }
  }
  throw new Error(`no free name for ${base}`);
}

/** `name` cut to at most `max` UTF-8 bytes, on a character boundary. */
function fit(name: string, max: number): string {
  if (Buffer.byteLength(name) <= max) return name;
  let out = '';
  let n = 0;
  for (const ch of name) {
    n += Buffer.byteLength(ch);
    if (n > max) break;
    out += ch;
  }
  return out;
}

/** at() for a name given as the directory's own bytes. */
function rawAt(dir: number, name: Buffer): Buffer {
  return Buffer.concat([Buffer.from(`${fdPath(dir)}/`), name]);
}

/** unlink(2): never follows a symlink; already gone is fine. */
function unlinkIfThere(p: string): void {
  try {
    fs.unlinkSync(p);
  } catch (e) {
    if (codeOf(e) !== 'ENOENT') throw e;
  }
}

/** Makes a directory's renames and unlinks durable. A file system that cannot sync a directory (EINVAL) has nothing more to give. */
function syncDir(fd: number): void {
  try {
    fs.fsyncSync(fd);
  } catch (e) {
    if (codeOf(e) !== 'EINVAL' && codeOf(e) !== 'ENOTSUP') throw e;
  }
}
