/**
 * One file of inbox/, read and judged: through a descriptor (never a
 * symlink, never blocking on a FIFO), bounded, decoded, checked for depth,
 * split into events and stamped `"inbox": "<id>"` by editing each object's
 * text (never by re-serialising it, which would recurse). See inbox.ts for
 * the drain these serve.
 */
import fs from 'node:fs';
import { at, READ_FLAGS } from '../sandbox/beneath.js';
import { MAX_LINE_BYTES } from './jsonl.js';
import { MAX_JSON_DEPTH, pathTooDeep } from './parse-line.js';

const codeOf = (e: unknown): string => (e as NodeJS.ErrnoException)?.code ?? (e instanceof Error ? e.message : String(e));

/** One event of a file: the line as it will be appended, and whether it is a JSON object (so it carries the stamp). */
export interface Entry {
  text: string;
  object: boolean;
}

export type Prepared =
  | { kind: 'gone' }
  | { kind: 'defer' }
  | { kind: 'refuse'; why: string }
  | { kind: 'take'; entries: Entry[]; bytes: number };

/** Reads one .taking file through its descriptor (never a symlink, never blocking on a FIFO) and judges it. */
export function prepare(taking: number, id: string, now: number, quietMs: number): Prepared {
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

export function readUpTo(fd: number, max: number): Buffer {
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

export const utf8 = new TextDecoder('utf-8', { fatal: true });

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
export function stampOf(text: string): string | null {
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
