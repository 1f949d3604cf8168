/**
 * inbox/: an ingress that is atomic for any size and any number of writers.
 *
 * `echo ... >> events.jsonl` is atomic only for one write: bash writes a
 * line longer than its buffer in several write(2) calls, and concurrent
 * writers then interleave. A file renamed into `inbox/` appears whole or
 * not at all, so a writer writes it anywhere on the same file system (a
 * name starting with "." inside inbox/ is ignored) and renames it in.
 *
 * drainInbox() moves inbox files into events.jsonl, exactly once, and must
 * run under the session lease (wake() calls it first thing). Each file goes
 * through three steps, each safe to crash after:
 *
 *  1. rename inbox/<name> to inbox/.taking/<uid>-<name>: the name is free
 *     again for its writer, and the file has an identity no one else uses;
 *  2. append its lines to events.jsonl in one write (all files of a drain
 *     together), each JSON object line stamped `"inbox": "<uid>-<name>"`;
 *  3. unlink the .taking file.
 *
 * After a crash, a .taking file whose identity the fold has seen in the log
 * (SessionSnapshot.inbox_taken) was appended already and is only unlinked;
 * any other is appended now. A line that is not a JSON object cannot carry
 * the stamp: it is appended as it is (and reported as invalid), and may be
 * reported twice if the crash fell between steps 2 and 3.
 *
 * A file may hold one JSON object (pretty-printed or not) or JSONL lines.
 * Anything that is not a regular file, or is larger than a journal line may
 * be, is left in inbox/ renamed `.refused-<name>`, and reported.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { SessionPaths } from '../home.js';
import type { Ids } from '../ids.js';
import { appendLines, MAX_LINE_BYTES } from './jsonl.js';

/** Files moved per drain; the rest wait for the next one (the daemon looks again after every run). */
export const MAX_INBOX_FILES = 256;
/** Bytes moved per drain, likewise. */
const MAX_DRAIN_BYTES = 256 * 1024 * 1024;
const TAKING = '.taking';

export interface DrainResult {
  files: number;
  lines: number;
  /** Files refused (not regular, too large), in words. */
  problems: string[];
}

/** Whether inbox/ holds files to move (ignoring hidden ones). Never throws. */
export function inboxHasFiles(paths: SessionPaths): boolean {
  try {
    if (fs.readdirSync(paths.inbox).some((n) => !n.startsWith('.'))) return true;
    return fs.readdirSync(path.join(paths.inbox, TAKING)).length > 0;
  } catch {
    return false;
  }
}

function list(dir: string): string[] {
  try {
    return fs.readdirSync(dir).sort();
  } catch {
    return [];
  }
}

/**
 * Moves inbox files into the log (see the module comment). `taken` is the
 * snapshot's inbox_taken, read under the same lease. Returns what it moved.
 */
export function drainInbox(paths: SessionPaths, ids: Pick<Ids, 'uuid'>, taken: readonly string[]): DrainResult {
  const result: DrainResult = { files: 0, lines: 0, problems: [] };
  const takingDir = path.join(paths.inbox, TAKING);
  const fresh = list(paths.inbox).filter((n) => !n.startsWith('.'));
  if (fresh.length === 0 && list(takingDir).length === 0) return result;
  fs.mkdirSync(takingDir, { recursive: true });
  for (const name of fresh.slice(0, MAX_INBOX_FILES)) {
    try {
      fs.renameSync(path.join(paths.inbox, name), path.join(takingDir, `${ids.uuid()}-${name}`));
    } catch {
      // gone meanwhile: nothing to take
    }
  }
  const seen = new Set(taken);
  const lines: string[] = [];
  const done: string[] = [];
  let bytes = 0;
  for (const id of list(takingDir)) {
    const file = path.join(takingDir, id);
    if (seen.has(id)) {
      done.push(file); // appended before a crash: only the unlink is left
      continue;
    }
    const read = readInboxFile(file);
    if ('problem' in read) {
      result.problems.push(`inbox/${originalName(id)}: ${read.problem}; left as inbox/.refused-${originalName(id)}`);
      try {
        fs.renameSync(file, path.join(paths.inbox, `.refused-${originalName(id)}`));
      } catch {
        // leave it where it is
      }
      continue;
    }
    if (bytes > 0 && bytes + read.bytes > MAX_DRAIN_BYTES) break;
    bytes += read.bytes;
    lines.push(...toLines(read.text, id));
    done.push(file);
    result.files += 1;
  }
  if (lines.length) appendLines(paths.events, lines, { durable: true });
  result.lines = lines.length;
  for (const f of done) fs.rmSync(f, { force: true });
  return result;
}

/** The writer's name of a .taking file (its uuid prefix removed). */
function originalName(id: string): string {
  return id.replace(/^[0-9a-f-]{36}-/, '');
}

/** Reads a regular file without following a symlink or blocking on a FIFO. */
function readInboxFile(file: string): { text: string; bytes: number } | { problem: string } {
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK | fs.constants.O_NOCTTY);
  } catch (e) {
    return { problem: `cannot be read (${(e as NodeJS.ErrnoException).code ?? 'error'}; a symlink is not followed)` };
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) return { problem: 'not a regular file' };
    if (st.size > MAX_LINE_BYTES) return { problem: `${st.size} bytes, over the ${MAX_LINE_BYTES}-byte limit of a journal line` };
    const buf = fs.readFileSync(fd);
    return { text: buf.toString('utf8'), bytes: buf.length };
  } finally {
    fs.closeSync(fd);
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * One journal line per event: the whole file when it is one JSON object,
 * else each non-blank line. Objects are stamped with `inbox`; anything else
 * is kept as written so the log keeps it and reports it.
 */
function toLines(text: string, id: string): string[] {
  const stamp = (v: Record<string, unknown>) => JSON.stringify({ ...v, inbox: id });
  const whole = text.replace(/^\uFEFF/, '').trim();
  if (whole.startsWith('{')) {
    try {
      const v: unknown = JSON.parse(whole);
      if (isObject(v)) return [stamp(v)];
    } catch {
      // not one object: read it as lines
    }
  }
  const out: string[] = [];
  for (const raw of whole.split('\n')) {
    const line = raw.replace(/\r$/, '');
    if (line.trim() === '') continue;
    let v: unknown;
    try {
      v = JSON.parse(line);
    } catch {
      out.push(line);
      continue;
    }
    out.push(isObject(v) ? stamp(v) : line);
  }
  return out;
}
