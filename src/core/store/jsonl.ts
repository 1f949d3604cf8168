/**
 * The two primitives every journal rests on.
 *
 * appendLines: one write(2) on an O_APPEND descriptor per call. On Linux a
 * regular file's write is serialised under the inode lock, so concurrent
 * appenders (the CLI, `echo >>`, the daemon) never interleave within a line.
 * If the file ends in an unterminated line (a writer died mid-line), the
 * append seals it with "\n" in the same write, so the torn text stays in the
 * log as its own (invalid) line and never swallows ours.
 *
 * readLines: an incremental reader. It starts at a saved byte offset, returns
 * every complete line after it with its 1-based line number, and holds back
 * an unterminated last line until it is finished. Its cost is proportional to
 * the new bytes, not to the file.
 */
import fs from 'node:fs';
import { READ_FLAGS, closeQuietly } from '../sandbox/beneath.js';

export interface Cursor {
  /** Byte offset just past the last complete line read. */
  offset: number;
  /** Complete lines before `offset`. */
  line: number;
  /** Inode of the file the cursor belongs to (0 = unknown). */
  ino: number;
}

export const START: Cursor = Object.freeze({ offset: 0, line: 0, ino: 0 });

export interface RawLine {
  /** 1-based line number. */
  no: number;
  /** The line without its "\n" (a trailing "\r" and a leading BOM removed). */
  text: string;
  /** Byte length of the line as stored, "\n" excluded. */
  bytes: number;
  /** True when the line exceeded MAX_LINE_BYTES; `text` then holds only its head. */
  oversize: boolean;
  /** True when the bytes are not valid UTF-8. */
  badUtf8: boolean;
}

export interface ReadResult {
  lines: RawLine[];
  cursor: Cursor;
  /** Bytes of an unterminated last line held back. */
  heldBack: number;
  /** The file was replaced or truncated since `from`: lines were read from the start. */
  reset: boolean;
}

/** Lines longer than this are reported as invalid without being kept in memory. */
export const MAX_LINE_BYTES = 64 * 1024 * 1024;
const OVERSIZE_HEAD = 4096;
const CHUNK = 1 << 20;
const NL = 0x0a;
/**
 * readLines' read buffer, one per process and made on first use: readLines is
 * synchronous, and every line it keeps is copied out. A buffer per call was a
 * megabyte allocated for every journal read however little it held: 20,000
 * at a daemon's start with 10,000 sessions, whose memory the process kept.
 */
let scratch: Buffer | null = null;

const utf8 = new TextDecoder('utf-8', { fatal: true });
const utf8Lossy = new TextDecoder('utf-8');

function decodeLine(buf: Buffer): { text: string; badUtf8: boolean } {
  let text: string;
  let badUtf8 = false;
  try {
    text = utf8.decode(buf);
  } catch {
    text = utf8Lossy.decode(buf);
    badUtf8 = true;
  }
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  if (text.endsWith('\r')) text = text.slice(0, -1);
  return { text, badUtf8 };
}

/** A journal open for reading, with fstat of that descriptor. */
export interface OpenJournal {
  fd: number;
  stat: fs.Stats;
}

/**
 * The error a journal that is not a regular file is refused with: worded as
 * the kernel words one (EISDIR is what reading a folder gave before), and
 * without the path, as a read's errors are (some callers pass the message
 * on, and name the file themselves).
 */
function notRegular(stat: fs.Stats, op: 'read' | 'append' = 'read'): NodeJS.ErrnoException {
  const [code, words] = stat.isDirectory() ? ['EISDIR', 'illegal operation on a directory'] : ['ENXIO', 'not a regular file'];
  return Object.assign(new Error(`${code}: ${words}, ${op}`), { code });
}

/** An append: at the end whatever others wrote, never through a symlink, never blocking on a FIFO. */
const APPEND_FLAGS = fs.constants.O_RDWR | fs.constants.O_APPEND | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK | fs.constants.O_NOCTTY;

/**
 * The file opened for reading; throws when it cannot be (ENOENT when it does
 * not exist). The caller closes it. A journal is a regular file the runtime
 * makes, so anything else at its name is refused with an error: opened with
 * O_NONBLOCK (a FIFO opened for reading would block until a writer came, and
 * the daemon's thread with it) and O_NOFOLLOW (never through a symlink:
 * ELOOP), and judged by fstat of the same descriptor (a FIFO, a device, a
 * socket: ENXIO; a folder: EISDIR).
 */
function openJournal(file: string): OpenJournal {
  const fd = fs.openSync(file, READ_FLAGS);
  try {
    const stat = fs.fstatSync(fd);
    if (!stat.isFile()) throw notRegular(stat);
    return { fd, stat };
  } catch (e) {
    closeQuietly(fd);
    throw e;
  }
}

/** openJournal, or null when the file does not exist (any other failure throws). The caller closes it. */
export function openIfExists(file: string): OpenJournal | null {
  try {
    return openJournal(file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
}

/**
 * Reads the complete lines after `from`. Missing file: no lines. A file
 * whose inode changed or that shrank below the cursor is read from the start
 * (`reset`), since a saved offset into another file means nothing.
 */
export function readLines(file: string, from: Cursor = START, opts: { maxLines?: number; /** Read no further than this byte offset (a fold's cursor), even if the file is longer. */ until?: number } = {}): ReadResult {
  const f = openIfExists(file);
  if (f === null) return { lines: [], cursor: { ...from }, heldBack: 0, reset: false };
  const { fd, stat: st } = f;
  try {
    let start = from;
    let reset = false;
    if ((from.ino !== 0 && from.ino !== st.ino) || st.size < from.offset || !afterNewline(fd, from.offset)) {
      // A saved offset into another file, or one that no longer ends a line
      // (the file was rewritten in place, or shortened by a power loss and
      // written again): read from the start, never from the middle of a line.
      start = { offset: 0, line: 0, ino: st.ino };
      reset = true;
    }
    const size = opts.until !== undefined && !reset ? Math.min(st.size, Math.max(opts.until, start.offset)) : st.size;
    const lines: RawLine[] = [];
    let pos = start.offset;
    let lineNo = start.line;
    let lineStart = pos; // file offset where the current (unfinished) line began
    const parts: Buffer[] = [];
    let partBytes = 0;
    let oversize = false;
    const buf = (scratch ??= Buffer.allocUnsafe(CHUNK));
    const maxLines = opts.maxLines ?? Infinity;

    outer: while (pos < size) {
      const n = fs.readSync(fd, buf, 0, Math.min(CHUNK, size - pos), pos);
      if (n <= 0) break;
      let i = 0;
      while (i < n) {
        const nl = buf.indexOf(NL, i);
        const end = nl === -1 || nl >= n ? n : nl;
        if (!oversize) {
          if (partBytes + (end - i) > MAX_LINE_BYTES) {
            oversize = true;
            const head = Buffer.concat([...parts, buf.subarray(i, end)]).subarray(0, OVERSIZE_HEAD);
            parts.length = 0;
            parts.push(Buffer.from(head));
          } else {
            parts.push(Buffer.from(buf.subarray(i, end)));
          }
        }
        partBytes += end - i;
        if (end === n) break; // line continues in the next chunk
        // a complete line
        lineNo += 1;
        const raw = parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts);
        const { text, badUtf8 } = decodeLine(raw);
        lines.push({ no: lineNo, text, bytes: partBytes, oversize, badUtf8 });
        parts.length = 0;
        partBytes = 0;
        oversize = false;
        lineStart = pos + nl + 1;
        i = nl + 1;
        if (lines.length >= maxLines) break outer;
      }
      pos += n;
      if (lines.length >= maxLines) break;
    }
    return {
      lines,
      cursor: { offset: lineStart, line: lineNo, ino: st.ino },
      heldBack: lines.length >= maxLines || size < st.size ? 0 : st.size - lineStart,
      reset,
    };
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * The file's first line, if it is complete (ends in "\n"), decoded like any
 * line; null when the file is missing, empty, or its first line is not
 * finished yet, and when it is longer than `maxBytes`. Reads only as far as
 * the first "\n".
 */
export function readFirstLine(file: string, maxBytes = MAX_LINE_BYTES): string | null {
  const f = openIfExists(file);
  if (f === null) return null;
  const { fd } = f;
  try {
    const parts: Buffer[] = [];
    let pos = 0;
    // A first line is a session.created: a few hundred bytes, so one small read nearly always ends it.
    let want = 4096;
    while (pos <= maxBytes) {
      const b = Buffer.allocUnsafe(want);
      const n = fs.readSync(fd, b, 0, want, pos);
      if (n <= 0) return null;
      const nl = b.subarray(0, n).indexOf(NL);
      if (nl !== -1) {
        parts.push(b.subarray(0, nl));
        return pos + nl > maxBytes ? null : decodeLine(Buffer.concat(parts)).text;
      }
      parts.push(b.subarray(0, n));
      pos += n;
      want = Math.min(want * 4, CHUNK);
    }
    return null;
  } finally {
    fs.closeSync(fd);
  }
}

/** How long a last line may stay without its "\n" before the daemon seals it (sealTail). */
export const TAIL_GRACE_MS = 2000;

/** Whether `offset` is 0 or just past a "\n" (one byte read). */
function afterNewline(fd: number, offset: number): boolean {
  if (offset === 0) return true;
  const b = Buffer.alloc(1);
  return fs.readSync(fd, b, 0, 1, offset - 1) === 1 && b[0] === NL;
}

/**
 * Ends an unterminated last line with "\n" (a writer that stopped mid-line,
 * or `printf` without a newline), so it is read and judged instead of
 * waiting forever. Returns whether it sealed anything.
 */
export function sealTail(file: string): boolean {
  let fd: number;
  try {
    fd = fs.openSync(file, APPEND_FLAGS);
  } catch {
    return false;
  }
  try {
    if (!fs.fstatSync(fd).isFile() || !endsUnterminated(fd)) return false;
    fs.writeSync(fd, '\n');
    return true;
  } finally {
    fs.closeSync(fd);
  }
}

export interface AppendOptions {
  /** fdatasync before returning, so the lines survive power loss. */
  durable?: boolean;
  /** Called with the file's descriptor after the write instead (a sync function the caller chose; durability.ts). */
  sync?: (fd: number) => void;
}

/**
 * Appends complete lines in one write(2). Returns the 1-based line number of
 * nothing in particular: callers that need line numbers read them back.
 * Each entry of `lines` must be a single line (no "\n").
 */
export function appendLines(file: string, lines: readonly string[], opts: AppendOptions = {}): { sealed: boolean } {
  if (lines.length === 0) return { sealed: false };
  for (const l of lines) {
    if (l.includes('\n')) throw new Error(`appendLines(${file}): a line must not contain "\\n"`);
  }
  // O_RDWR, not O_WRONLY: the tail check reads the last byte. Never through a symlink, never into a FIFO.
  const fd = fs.openSync(file, APPEND_FLAGS | fs.constants.O_CREAT, 0o644);
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) throw notRegular(st, 'append');
    const sealed = endsUnterminated(fd) && !tailCompletes(fd);
    const text = (sealed ? '\n' : '') + lines.join('\n') + '\n';
    writeAll(fd, Buffer.from(text, 'utf8'));
    if (opts.sync) opts.sync(fd);
    else if (opts.durable) fs.fdatasyncSync(fd);
    return { sealed };
  } finally {
    fs.closeSync(fd);
  }
}

/** How long an append waits for someone else's half-written last line to be finished before sealing it. */
export const SEAL_GRACE_MS = 250;
const sleeper = new Int32Array(new SharedArrayBuffer(4));

/**
 * SPEC §4: a last line still being written is left alone for a moment (a
 * program may write a long line in several writes); only if it stays
 * unterminated is it sealed. Blocks for at most SEAL_GRACE_MS, and only in
 * this rare case.
 */
function tailCompletes(fd: number): boolean {
  for (let waited = 0; waited < SEAL_GRACE_MS; waited += 25) {
    Atomics.wait(sleeper, 0, 0, 25);
    if (!endsUnterminated(fd)) return true;
  }
  return false;
}

function endsUnterminated(fd: number): boolean {
  const size = fs.fstatSync(fd).size;
  if (size === 0) return false;
  const b = Buffer.alloc(1);
  fs.readSync(fd, b, 0, 1, size - 1);
  return b[0] !== NL;
}

function writeAll(fd: number, data: Buffer) {
  // A regular file takes the whole buffer in one call; the loop only matters
  // on a short write (disk full, signals), where atomicity is lost anyway.
  let off = 0;
  while (off < data.length) off += fs.writeSync(fd, data, off, data.length - off);
}

/**
 * Reads complete lines backwards from `end` (a cursor whose line count is
 * known), stopping once at least `minBytes` were read or the file's start is
 * reached. Returns them in file order with their line numbers, so a reader
 * can take the tail of a large log without reading the whole file.
 */
export function readLinesBefore(file: string, end: Cursor, minBytes: number): RawLine[] {
  if (end.offset === 0) return [];
  const { fd } = openJournal(file);
  try {
    const chunks: Buffer[] = [];
    let pos = end.offset;
    let got = 0;
    // Read until minBytes are in hand, then on to the previous newline so the first line is whole.
    for (;;) {
      const len = Math.min(Math.max(minBytes - got, 4096), 256 * 1024, pos);
      const first = pos === end.offset;
      pos -= len;
      const b = Buffer.allocUnsafe(len);
      fs.readSync(fd, b, 0, len, pos);
      chunks.unshift(b);
      got += len;
      if (pos === 0) break;
      // A line boundary inside what was read; the range's own final "\n" is not one.
      const scan = first ? b.subarray(0, b.length - 1) : b;
      if (got >= minBytes && scan.indexOf(NL) !== -1) break;
    }
    let all = Buffer.concat(chunks);
    if (pos > 0) all = all.subarray(all.indexOf(NL) + 1); // drop the partial first line
    // all ends with "\n" (end.offset is just past a complete line)
    const out: RawLine[] = [];
    let i = 0;
    while (i < all.length) {
      const nl = all.indexOf(NL, i);
      const stop = nl === -1 ? all.length : nl;
      const { text, badUtf8 } = decodeLine(all.subarray(i, stop));
      out.push({ no: 0, text, bytes: stop - i, oversize: false, badUtf8 });
      i = stop + 1;
    }
    const first = end.line - out.length + 1;
    out.forEach((l, k) => (l.no = first + k));
    return out;
  } finally {
    fs.closeSync(fd);
  }
}
