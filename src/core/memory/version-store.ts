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
 * The scan stores many contents at once (storeContents, asynchronous: the
 * event loop keeps running): each content file fsynced, then each
 * directory it touched once, then all of the scan's lines in one append
 * and one fsync (appendVersions). Stale temp files of the store (a crash
 * between create and rename) are removed by removeStaleStoreTemps.
 *
 * Appends of one log are serialised within the process (withLogLock), so a
 * scan that compares the directory with the log's latest versions and then
 * appends cannot interleave with another run's scan of the same agent.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import type { Home } from '../foundation/home.js';
import { writeFileAtomic } from '../store/atomic-file.js';
import { appendLines, readLines, START, type Cursor } from '../store/jsonl.js';
import { describeIssues } from '../store/parse-line.js';
import { readAtMost } from '../sandbox/beneath.js';
import { DIRECTORY_PATH, SHA256, VersionLine, type VersionOp } from '../schema/index.js';

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

/** The temp files of the store's writes (writeFileAtomic's and storeContents'): `.<sha256>.<12 hex>.tmp`. */
const STORE_TEMP = /^\.[0-9a-f]{64}\.[0-9a-f]{12}\.tmp$/;

/**
 * Stores each content once (like storeContent) without blocking the event
 * loop: every new content file is written and fsynced, then renamed, and
 * each directory that gained a file is fsynced once at the end. When this
 * resolves every content it returns a sha256 for is durable (so its line
 * may be appended). Returns the sha256s in order: of all the contents, or
 * of the first ones when `stop(done)`, asked before each, said to stop.
 */
export async function storeContents(v: VersionedDir, contents: readonly Uint8Array[], stop: (done: number) => boolean = () => false): Promise<string[]> {
  const dirs = new Set<string>();
  const out: string[] = [];
  for (const data of contents) {
    if (stop(out.length)) break;
    const sha = sha256Of(data);
    out.push(sha);
    const file = contentFile(v, sha);
    if (await exists(file)) continue;
    const dir = path.dirname(file);
    if (!(await exists(dir))) dirs.add(v.store);
    await fsp.mkdir(dir, { recursive: true });
    const tmp = path.join(dir, `.${sha}.${crypto.randomBytes(6).toString('hex')}.tmp`);
    try {
      const fh = await fsp.open(tmp, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW, 0o644);
      try {
        await fh.writeFile(data);
        await fh.sync();
      } finally {
        await fh.close();
      }
      await fsp.rename(tmp, file);
    } catch (e) {
      await fsp.rm(tmp, { force: true });
      throw e;
    }
    dirs.add(dir);
  }
  for (const dir of dirs) await syncDir(dir);
  return out;
}

async function exists(file: string): Promise<boolean> {
  try {
    await fsp.lstat(file);
    return true;
  } catch {
    return false;
  }
}

async function syncDir(dir: string): Promise<void> {
  let fh;
  try {
    fh = await fsp.open(dir, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY);
  } catch {
    return;
  }
  try {
    await fh.sync();
  } catch {
    // Some filesystems refuse fsync on a directory; the rename is still atomic.
  } finally {
    await fh.close();
  }
}

/**
 * Removes the store's temp files older than `olderThanMs` (left by a crash
 * between create and rename; a younger one may be another process's write
 * in progress). Returns how many were removed. Best effort.
 */
export async function removeStaleStoreTemps(v: VersionedDir, now: number, olderThanMs: number): Promise<number> {
  let removed = 0;
  let shards: string[];
  try {
    shards = await fsp.readdir(v.store);
  } catch {
    return 0;
  }
  for (const shard of shards) {
    if (!/^[0-9a-f]{2}$/.test(shard)) continue;
    let dir;
    try {
      dir = await fsp.opendir(path.join(v.store, shard));
    } catch {
      continue;
    }
    for await (const e of dir) {
      if (!STORE_TEMP.test(e.name)) continue;
      const file = path.join(v.store, shard, e.name);
      try {
        const st = await fsp.lstat(file);
        if (st.isFile() && now - st.mtimeMs > olderThanMs) {
          await fsp.unlink(file);
          removed += 1;
        }
      } catch {
        // gone meanwhile
      }
    }
  }
  return removed;
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

/** Appends version lines in one write and one fsync (each checked against the schema first: all or none). */
export function appendVersions(v: VersionedDir, lines: readonly VersionLine[]): void {
  if (lines.length === 0) return;
  const text = lines.map((l) => JSON.stringify(VersionLine.parse(l)));
  fs.mkdirSync(path.dirname(v.log), { recursive: true });
  appendLines(v.log, text, { durable: true });
}

/** Ops whose line names a content in the store. */
const STORED_OPS: ReadonlySet<VersionOp> = new Set(['write', 'restore', 'promote']);

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
  /** The latest line of each file (scan_incomplete markers are not files: left out). */
  readonly byPath = new Map<string, VersionLine>();
  /** The contents the log's lines stored (each once) and their bytes in all: the store's size as the log tells it. */
  readonly stored = new Set<string>();
  storedBytes = 0;
  /** Lines taken in so far (a line taken again counts again): a mark, to tell the paths whose latest line came after it. */
  taken = 0;
  private readonly takenAt = new Map<string, number>();

  constructor(private readonly v: VersionedDir) {}

  refresh(): this {
    const r = readLines(this.v.log, this.cursor);
    if (r.reset) {
      this.byPath.clear();
      this.takenAt.clear();
      this.stored.clear();
      this.storedBytes = 0;
    }
    const out: VersionsRead = { lines: [], notes: [] };
    parseVersionLines(this.v.log, r.lines, out);
    for (const { line } of out.lines) this.take(line);
    this.cursor = r.cursor;
    return this;
  }

  /** Takes one line in (refresh's, or one just appended; taking a line twice changes nothing). */
  take(line: VersionLine): void {
    if (line.path === DIRECTORY_PATH) return;
    this.byPath.set(line.path, line);
    this.takenAt.set(line.path, ++this.taken);
    if (line.sha256 !== null && STORED_OPS.has(line.op) && !this.stored.has(line.sha256)) {
      this.stored.add(line.sha256);
      this.storedBytes += line.bytes ?? 0;
    }
  }

  /** Whether `path`'s latest line was taken in after the mark `taken` had (a path this knows nothing of: false). */
  newerThan(path: string, mark: number): boolean {
    return (this.takenAt.get(path) ?? 0) > mark;
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
