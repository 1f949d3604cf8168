/**
 * The agent's memory directory and substrate as a run and a person see them
 * (docs/memory.md): the mounts (/memory as agent.yaml `memory.mode` says,
 * /substrate read-only), MEMORY.md's section of the system prompt, the
 * record of one known write (recordContent: the file tools, promote,
 * restore), and restore. The scan that records what changed is
 * memory-scan.ts's.
 *
 * What is not versioned: LEARNINGS.md at the top of memory/ (rendered from
 * the learnings journal, which is the truth: an edit of the file is
 * overwritten at the next render and never reaches the journal or the
 * prompt). Nothing else is left out, not even names that look like temp
 * files: this process's atomic writes (replaceBeneath, writeFileAtomic)
 * create and rename within one synchronous call, so its scan never sees
 * their temp files; another process's may be recorded and then recorded
 * deleted, which is harmless, whereas excluding by name let the agent hide
 * files from the versions. Temp files older than MEMORY_TEMP_STALE_MS (a
 * crash's leftovers) are removed at a run's first scan, in memory/ and in
 * the store.
 */
import fs from 'node:fs';
import path from 'node:path';
import { iso, type Clock } from '../foundation/clock.js';
import type { Home } from '../foundation/home.js';
import { MEMORY_DOCUMENT_MAX_BYTES, type MemorySettings, type VersionLine, type VersionOp } from '../schema/index.js';
import { READ_FLAGS } from '../sandbox/beneath.js';
import { replaceBeneath } from '../sandbox/atomic-replace.js';
import type { MountSpec } from '../sandbox/isolation.js';
import { VirtualFs } from '../sandbox/virtual-fs.js';
import { Redactor } from '../foundation/redact.js';
import { appendVersion, memoryVersioned, readContent, storeContent, substrateVersioned, withLogLock, type VersionedDir } from './version-store.js';

/** Whether a path of memory/ is left out of the versions (derived: LEARNINGS.md). */
export function notVersioned(rel: string): boolean {
  return rel === 'LEARNINGS.md';
}

/**
 * The run's mounts for the agent's memory (absent for mode none) and
 * substrate (always, read-only); both directories are created when missing.
 * Files in both are replaced whole by the file tools (atomic), and memory's
 * documents are bounded (MEMORY_DOCUMENT_MAX_BYTES).
 */
export function agentMounts(home: Home, agentId: string, memory: MemorySettings): MountSpec[] {
  const out: MountSpec[] = [];
  if (memory.mode !== 'none') {
    const m = memoryVersioned(home, agentId);
    fs.mkdirSync(m.dir, { recursive: true });
    out.push({ host: m.dir, target: m.target, writable: memory.mode === 'read_write', atomic: true, maxFileBytes: MEMORY_DOCUMENT_MAX_BYTES });
  }
  const s = substrateVersioned(home, agentId);
  fs.mkdirSync(s.dir, { recursive: true });
  out.push({ host: s.dir, target: s.target, writable: false, atomic: true });
  return out;
}

/** The first `max` bytes of a regular file and its size, without following a symlink or blocking on a FIFO; null when it is not a regular file. */
function readHead(file: string, max: number): { head: Buffer; size: number } | null {
  let fd: number;
  try {
    fd = fs.openSync(file, READ_FLAGS);
  } catch {
    return null;
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) return null;
    // Bounded by what is read, not by what fstat said (the file may grow meanwhile).
    const buf = Buffer.alloc(max);
    let n = 0;
    for (let got = -1; got !== 0 && n < max; n += got) got = fs.readSync(fd, buf, n, max - n, n);
    return { head: buf.subarray(0, n), size: Math.max(st.size, n) };
  } catch {
    return null;
  } finally {
    fs.closeSync(fd);
  }
}

/** `data` cut to at most `max` bytes, at a character boundary. */
function cutBytes(data: Buffer, max: number): string {
  let end = Math.min(max, data.length);
  // Back off to the start of a UTF-8 sequence.
  while (end > 0 && end < data.length && (data[end]! & 0xc0) === 0x80) end -= 1;
  return data.subarray(0, end).toString('utf8');
}

/**
 * MEMORY.md's section of the system prompt (null: no MEMORY.md, or an empty
 * one). At most `promptBytes` of it, cut with a note saying how much was
 * left out and where to read it. A symlink, FIFO or device there is ignored.
 */
export function memoryPromptSection(home: Home, agentId: string, settings: MemorySettings): string | null {
  if (settings.mode === 'none') return null;
  const file = path.join(memoryVersioned(home, agentId).dir, 'MEMORY.md');
  // A few bytes past the bound, to cut at a character boundary.
  const r = readHead(file, settings.prompt_bytes + 4);
  if (!r || r.size === 0) return null;
  const text = cutBytes(r.head, settings.prompt_bytes);
  if (text.trim() === '' && r.size <= settings.prompt_bytes) return null;
  const size = r.size;
  const head = [
    '# Memory',
    '',
    `Your memory directory is /memory (${settings.mode === 'read_write' ? 'read-write' : 'read-only'}): plain text documents every session of this agent sees, each at most ${MEMORY_DOCUMENT_MAX_BYTES} bytes, every change versioned. Its MEMORY.md, as this run started:`,
    '',
  ].join('\n');
  const cut = Buffer.byteLength(text) < size ? `\n\n[MEMORY.md is ${size} bytes; only its first ${Buffer.byteLength(text)} are shown here (the prompt holds ${settings.prompt_bytes}). Read /memory/MEMORY.md for the rest.]` : '';
  return `${head}${text.trimEnd()}${cut}`;
}

export interface Who {
  session_id: string | null;
  wake_id: string | null;
}


/**
 * Records content known to be written to `rel` (the file tools' write and
 * edit, restore): stored, and a line appended, unconditionally — two writes
 * of one file are two versions even when a scan saw neither. The path and
 * content are recorded as `redactor` redacts them (a run passes its own, as
 * its scans use).
 */
export async function recordContent(v: VersionedDir, rel: string, data: Buffer, op: VersionOp, who: Who, clock: Clock, o: { message?: string; redactor?: Redactor } = {}): Promise<VersionLine> {
  const red = o.redactor ?? Redactor.none;
  const kept = red.bytes(data);
  const message = o.message;
  return withLogLock(v, () => {
    const line: VersionLine = { path: red.text(rel), sha256: storeContent(v, kept), op, bytes: kept.length, session_id: who.session_id, wake_id: who.wake_id, at: iso(clock.now()), ...(message !== undefined ? { message } : {}) };
    appendVersion(v, line);
    return line;
  });
}

/** A path as people and the model give it ("/memory/notes/a.md", "notes/a.md") as the log names it; null when it is not inside. */
export function relPath(v: VersionedDir, input: string): string | null {
  const p = path.posix.normalize(input.startsWith(`${v.target}/`) ? input.slice(v.target.length + 1) : input);
  if (p === '.' || p.startsWith('/') || p.split('/').some((c) => c === '..' || c === '')) return null;
  return p;
}

/**
 * Writes a stored version back (atomically, beneath the directory: a symlink
 * the agent planted is replaced, never followed) and logs it as `restore`
 * with no session. What is written is the content as `redactor` redacts it
 * (a version stored before versions were redacted may hold a secret; one
 * stored since already is, and a secret stays a mark). Throws when the
 * version is not in the store.
 */
export async function restoreVersion(v: VersionedDir, rel: string, sha: string, clock: Clock, redactor: Redactor = Redactor.none): Promise<VersionLine> {
  const stored = readContent(v, sha);
  if (!stored) throw new Error(`no stored content ${sha} in ${path.basename(v.store)}/`);
  const data = redactor.bytes(stored);
  const vfs = new VirtualFs([{ target: v.target, host: v.dir, writable: true, atomic: true }], { home: v.target });
  fs.mkdirSync(v.dir, { recursive: true });
  replaceBeneath(vfs, `${v.target}/${rel}`, data, { durable: true });
  return recordContent(v, rel, data, 'restore', { session_id: null, wake_id: null }, clock);
}
