/**
 * A versioned directory (docs/memory.md, "Versions"): a directory of plain
 * files (`agents/<id>/memory/`, `agents/<id>/substrate/`), its change log
 * (`memory.log.jsonl`, `substrate.log.jsonl`: one VersionLine per change,
 * append-only, each line one write) and its content store
 * (`memory.versions/`, `substrate.versions/`: every content once, named by
 * its sha256, `<first two hex digits>/<sha256>`, written temp + rename).
 *
 * The log is the truth about what changed, when and by whom; the store
 * holds what each line names. A content is stored before its line is
 * appended, so a line never names content that is not there (a crash in
 * between leaves an unreferenced content file, which is harmless).
 * Neither the log nor the store is under the agent's mounts: only the
 * directory itself is (/memory, /substrate).
 *
 * Appends of one log are serialised within the process (withLogLock), so a
 * scan that compares the directory with the log's latest versions and then
 * appends cannot interleave with another run's scan of the same agent.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Home } from '../home.js';
import { writeFileAtomic } from '../store/atomic-file.js';
import { appendLines, readLines, START, type Cursor } from '../store/jsonl.js';
import { describeIssues } from '../store/parse-line.js';
import { readAtMost } from '../sandbox/beneath.js';
import { SHA256, VersionLine } from '../schema/index.js';

export interface VersionedDir {
  /** The directory's host path. */
  dir: string;
  /** Where the sandbox shows it: /memory or /substrate. */
  target: string;
  /** The change log. */
  log: string;
  /** The content store. */
  store: string;
}

/** The agent's memory directory and its versions. */
export function memoryVersioned(home: Home, agentId: string): VersionedDir {
  const a = home.agentDir(agentId);
  return { dir: path.join(a, 'memory'), target: '/memory', log: path.join(a, 'memory.log.jsonl'), store: path.join(a, 'memory.versions') };
}

/** The agent's substrate (what promote copies into) and its versions: a log and a store of its own. */
export function substrateVersioned(home: Home, agentId: string): VersionedDir {
  const a = home.agentDir(agentId);
  return { dir: path.join(a, 'substrate'), target: '/substrate', log: path.join(a, 'substrate.log.jsonl'), store: path.join(a, 'substrate.versions') };
}

export const sha256Of = (data: Uint8Array): string => crypto.createHash('sha256').update(data).digest('hex');

function contentFile(v: VersionedDir, sha: string): string {
  if (!SHA256.test(sha)) throw new Error(`not a sha256: ${JSON.stringify(sha)}`);
  return path.join(v.store, sha.slice(0, 2), sha);
}

/** Stores `data` once (by its sha256; durable before the log line that names it) and returns the sha256. */
export function storeContent(v: VersionedDir, data: Uint8Array): string {
  const sha = sha256Of(data);
  const file = contentFile(v, sha);
  if (fs.existsSync(file)) return sha;
  fs.mkdirSync(path.dirname(file), { recursive: true });
  writeFileAtomic(file, data);
  return sha;
}

/** The largest content the store is read back at (promote's bound; memory's is smaller). */
const READ_MAX = 16 * 1024 * 1024;

/** A stored content, checked against its name; null when missing or damaged. */
export function readContent(v: VersionedDir, sha: string): Buffer | null {
  let fd: number;
  try {
    fd = fs.openSync(contentFile(v, sha), fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
  } catch {
    return null;
  }
  try {
    const data = readAtMost(fd, READ_MAX, fs.fstatSync(fd).size);
    return data && sha256Of(data) === sha ? data : null;
  } finally {
    fs.closeSync(fd);
  }
}

/** Appends one version line (checked against the schema; durable: it is the only record of the change). */
export function appendVersion(v: VersionedDir, line: VersionLine): void {
  const parsed = VersionLine.parse(line);
  fs.mkdirSync(path.dirname(v.log), { recursive: true });
  appendLines(v.log, [JSON.stringify(parsed)], { durable: true });
}

export interface VersionsRead {
  lines: Array<{ no: number; line: VersionLine }>;
  /** Lines that were skipped, as "<file> line N: why". */
  notes: string[];
}

function parseVersionLines(file: string, raw: ReturnType<typeof readLines>['lines'], out: VersionsRead): void {
  for (const l of raw) {
    if (l.text.trim() === '') continue;
    if (l.oversize || l.badUtf8) {
      out.notes.push(`${path.basename(file)} line ${l.no}: ${l.oversize ? 'the line is too long' : 'not valid UTF-8'}`);
      continue;
    }
    let j: unknown;
    try {
      j = JSON.parse(l.text);
    } catch (e) {
      out.notes.push(`${path.basename(file)} line ${l.no}: not JSON (${(e as Error).message})`);
      continue;
    }
    const r = VersionLine.safeParse(j);
    if (r.success) out.lines.push({ no: l.no, line: r.data });
    else out.notes.push(`${path.basename(file)} line ${l.no}: not a version line: ${describeIssues(r.error)}`);
  }
}

/** Every line of a log (a missing log has none); bad lines are skipped with a note. */
export function readVersions(v: VersionedDir): VersionsRead {
  const out: VersionsRead = { lines: [], notes: [] };
  parseVersionLines(v.log, readLines(v.log).lines, out);
  return out;
}

/**
 * The latest line of each path, kept up to date incrementally: refresh()
 * reads only the lines appended since the last call (from a saved cursor;
 * a replaced or truncated log is read again from the start).
 */
export class LatestVersions {
  private cursor: Cursor = START;
  readonly byPath = new Map<string, VersionLine>();

  constructor(private readonly v: VersionedDir) {}

  refresh(): this {
    const r = readLines(this.v.log, this.cursor);
    if (r.reset) this.byPath.clear();
    const out: VersionsRead = { lines: [], notes: [] };
    parseVersionLines(this.v.log, r.lines, out);
    for (const { line } of out.lines) this.byPath.set(line.path, line);
    this.cursor = r.cursor;
    return this;
  }

  /** Whether `path` exists as of the log (its latest line is not a delete). */
  present(path: string): VersionLine | null {
    const l = this.byPath.get(path);
    return l && l.op !== 'delete' ? l : null;
  }
}

const locks = new Map<string, Promise<unknown>>();

/**
 * Runs `fn` after every earlier withLogLock of the same log in this process
 * has finished: compare-then-append is one step for the log's writers here.
 * (Another process appending at once can at worst repeat a line: the same
 * content, recorded twice.)
 */
export function withLogLock<T>(v: VersionedDir, fn: () => T | Promise<T>): Promise<T> {
  const prev = locks.get(v.log) ?? Promise.resolve();
  const next = prev.then(fn, fn);
  const settled = next.then(
    () => undefined,
    () => undefined,
  );
  locks.set(v.log, settled);
  void settled.then(() => {
    if (locks.get(v.log) === settled) locks.delete(v.log);
  });
  return next;
}
