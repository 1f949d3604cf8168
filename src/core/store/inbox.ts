/**
 * inbox/: an ingress that is atomic for any size and any number of writers.
 *
 * `echo ... >> events.jsonl` is atomic only for one write: bash writes a
 * line longer than its buffer in several write(2) calls, and concurrent
 * writers then interleave. A file renamed into `inbox/` appears whole or
 * not at all, so a writer writes it anywhere on the same file system (a
 * name starting with "." inside inbox/ is ignored) and renames it in.
 *
 * inbox/ is made on first use, by its first writer (`mkdir -p`): a session
 * is created without it, and a missing inbox/ is an empty one here (nothing
 * to take, nothing reported), while one that is not a directory is refused.
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
 * it is not a real directory (renamed `.refused-inbox`, `.refused-.taking`),
 * and a .taking entry named `<uuid>-<name>` whose name is not UTF-8, which
 * no drain makes (it names what it takes from a decoded name): listed as
 * text, such a name would be counted as waiting but never found.
 * A file that looks unfinished (empty, not UTF-8, or not ending in "\n" with
 * a last line that is not JSON) and was modified less than quietMs ago is
 * left in .taking for a later drain: a writer may still be writing it in
 * place. Renamed files are never held back: nothing would wake the daemon
 * when the wait ends (docs/format.md, "inbox/").
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { SessionPaths } from '../foundation/home.js';
import type { Ids } from '../foundation/ids.js';
import { at, closeQuietly, DIR_FLAGS } from '../sandbox/beneath.js';
import { rawAt, walkName } from '../sandbox/dir-entries.js';
import { appendLines } from './jsonl.js';
import { prepare, type Entry, type Prepared } from './inbox-file.js';
import { freshNames, hasFreshName, hasTakingEntry, takingEntries, type FirstNames } from './inbox-listing.js';
import { findDone, MARKER, readMarker, syncDir, unlinkIfThere, writeMarker, type Taken } from './inbox-recovery.js';

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
const REFUSED = '.refused-';
/** The bytes of a .taking entry's name before the writer's name: a UUID and "-". */
const UUID_PREFIX = 37;
/** Bytes in a file name (Linux NAME_MAX). */
const NAME_MAX = 255;

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

/** Whether drainInbox has anything to do: files to take, or an inbox/ or .taking to refuse (inboxSignature not null). Stops at the first name that says so. Never throws. */
export function inboxHasFiles(paths: SessionPaths): boolean {
  let inbox: number | null = null;
  let taking: number | null = null;
  try {
    try {
      inbox = fs.openSync(paths.inbox, DIR_FLAGS);
    } catch (e) {
      return notADirectory(e);
    }
    if (hasFreshName(inbox)) return true;
    try {
      taking = fs.openSync(at(inbox, TAKING), DIR_FLAGS);
    } catch (e) {
      return notADirectory(e);
    }
    return hasTakingEntry(taking);
  } catch {
    return false;
  } finally {
    closeQuietly(taking);
    closeQuietly(inbox);
  }
}

/**
 * What drainInbox would look at, as one short string, or null when it has
 * nothing to do: how many names inbox/ and .taking hold, and a hash of the
 * first MAX_INBOX_FILES of each in the order a drain takes them (it moves no
 * other). Two equal signatures before and after a drain mean the drain made
 * no progress: the daemon then waits for a change instead of draining again
 * at once. A change past those names that leaves the counts as they were
 * (one file there taken away by hand, another put in) is seen at the end of
 * that wait. Never throws.
 */
export function inboxSignature(paths: SessionPaths): string | null {
  let inbox: number | null = null;
  let taking: number | null = null;
  try {
    try {
      inbox = fs.openSync(paths.inbox, DIR_FLAGS);
    } catch (e) {
      return notADirectory(e) ? 'not-a-directory:inbox' : null;
    }
    const fresh = freshNames(inbox, MAX_INBOX_FILES);
    const none: FirstNames = { count: 0, first: [] };
    let listed = { ids: none, odd: none };
    try {
      taking = fs.openSync(at(inbox, TAKING), DIR_FLAGS);
      listed = takingEntries(taking, MAX_INBOX_FILES);
    } catch (e) {
      if (notADirectory(e)) return 'not-a-directory:.taking';
    }
    const parts = [fresh, listed.ids, listed.odd];
    if (parts.every((p) => p.count === 0)) return null;
    // "/" is in no name, so the names hashed one after another read back one way only.
    const hash = crypto.createHash('sha256');
    for (const p of parts) for (const name of p.first) hash.update(name).update('/');
    return `${parts.map((p) => p.count).join(',')}:${hash.digest('hex')}`;
  } catch {
    return null;
  } finally {
    closeQuietly(taking);
    closeQuietly(inbox);
  }
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
    const fresh = freshNames(inbox, MAX_INBOX_FILES);
    taking = openTaking(inbox, fresh.count > 0, result);
    if (taking === null) return result;
    const t = taking;
    const listed = takingEntries(t, MAX_INBOX_FILES);
    for (const raw of listed.odd.first) refuse(inbox, t, raw, 'in inbox/.taking under a name that is not valid UTF-8 (a run never names a file it takes so)', result);
    const waiting = listed.ids.count;
    let renamed = 0;
    for (const raw of fresh.first.slice(0, Math.max(0, MAX_INBOX_FILES - waiting))) {
      try {
        fs.renameSync(rawAt(inbox, raw), at(t, `${ids.uuid()}-${fit(new TextDecoder().decode(raw), NAME_MAX - UUID_PREFIX)}`));
        renamed += 1;
      } catch (e) {
        // gone meanwhile: nothing to take; anything else is said (the file stays, for the next drain)
        if (codeOf(e) !== 'ENOENT') result.problems.push(`inbox/${new TextDecoder().decode(raw)}: could not be taken (${codeOf(e)}); it stays for the next run`);
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

/** inbox/ is a symlink or a file: set it aside and take nothing (a writer makes a real one on its next drop). */
function refuseInboxDir(inboxPath: string, result: DrainResult): void {
  let parent: number | null = null;
  try {
    parent = fs.openSync(path.dirname(inboxPath), DIR_FLAGS);
    const name = freeName(parent, `${REFUSED}inbox`);
    fs.renameSync(at(parent, path.basename(inboxPath)), at(parent, name));
    syncDir(parent);
    result.problems.push(`inbox/ is not a directory (a symlink or a file); nothing was taken through it; it was renamed ${name}`);
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

function take(paths: SessionPaths, inbox: number, taking: number, taken: ReadonlySet<string>, opts: DrainOptions, result: DrainResult): void {
  const now = (opts.now ?? Date.now)();
  const quietMs = opts.quietMs ?? INBOX_QUIET_MS;
  const files: Taken[] = [];
  let bytes = 0;
  for (const id of takingEntries(taking, MAX_INBOX_FILES).ids.first.map((raw) => raw.toString())) {
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
  if (takingEntries(taking, 0).ids.count === 0) unlinkIfThere(at(taking, MARKER));
}

/**
 * Moves a .taking entry (`<uuid>-<name>`, as text or as the directory's
 * bytes) to inbox/.refused-<name> (never over another) and reports it; the
 * record on disk means it is reported once.
 */
function refuse(inbox: number, taking: number, id: string | Buffer, why: string, result: DrainResult): void {
  const raw = typeof id === 'string' ? Buffer.from(id) : id;
  const name = new TextDecoder().decode(raw.subarray(UUID_PREFIX));
  try {
    const to = freeName(inbox, `${REFUSED}${name}`);
    fs.renameSync(rawAt(taking, raw), at(inbox, to));
    syncDir(inbox);
    syncDir(taking);
    result.problems.push(`inbox/${name}: ${why}; left as inbox/${to}`);
  } catch (e) {
    result.problems.push(`inbox/${name}: ${why}; could not be set aside (${codeOf(e)}), left as inbox/${TAKING}/${walkName(raw)}`);
  }
}

/**
 * `base` when it is free in the directory, else `base` with a random suffix:
 * a name nobody could have taken in advance (anyone who can write inbox/ can
 * make `.refused-x`, `.refused-x.2`, ...).
 */
function freeName(dir: number, base: string): string {
  const stem = fit(base, NAME_MAX - 14);
  try {
    fs.lstatSync(at(dir, stem));
  } catch (e) {
    if (codeOf(e) === 'ENOENT') return stem;
    throw e;
  }
  return `${stem}.${crypto.randomBytes(6).toString('hex')}`;
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

