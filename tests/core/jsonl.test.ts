import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { appendLines, readLines, readLinesBefore, sealTail, START, MAX_LINE_BYTES } from '../../src/core/store/jsonl.js';
import { tempHome } from '../helpers/home.js';
import { runInChild, source } from '../helpers/in-child.js';

function file(t: Parameters<typeof tempHome>[0]) {
  const h = tempHome(t, { bundled: false });
  return path.join(h.root, 'log.jsonl');
}

test('appendLines writes complete lines and readLines returns them with 1-based numbers', (t) => {
  const f = file(t);
  appendLines(f, ['{"a":1}', '{"a":2}']);
  appendLines(f, ['{"a":3}']);
  assert.equal(fs.readFileSync(f, 'utf8'), '{"a":1}\n{"a":2}\n{"a":3}\n');
  const r = readLines(f);
  assert.deepEqual(r.lines.map((l) => [l.no, l.text]), [[1, '{"a":1}'], [2, '{"a":2}'], [3, '{"a":3}']]);
  assert.equal(r.cursor.offset, fs.statSync(f).size);
  assert.equal(r.cursor.line, 3);
  assert.equal(r.heldBack, 0);
});

test('readLines continues from a cursor and reads only the new bytes', (t) => {
  const f = file(t);
  appendLines(f, ['one', 'two']);
  const first = readLines(f);
  appendLines(f, ['three']);
  const next = readLines(f, first.cursor);
  assert.deepEqual(next.lines.map((l) => [l.no, l.text]), [[3, 'three']]);
  const again = readLines(f, next.cursor);
  assert.equal(again.lines.length, 0);
});

test('an unterminated last line is held back until it is finished', (t) => {
  const f = file(t);
  fs.writeFileSync(f, '{"a":1}\n{"half":');
  const r1 = readLines(f);
  assert.deepEqual(r1.lines.map((l) => l.text), ['{"a":1}']);
  assert.equal(r1.heldBack, '{"half":'.length);
  fs.appendFileSync(f, '2}\n');
  const r2 = readLines(f, r1.cursor);
  assert.deepEqual(r2.lines.map((l) => [l.no, l.text]), [[2, '{"half":2}']]);
});

test('appending after a torn last line seals it first, so neither line swallows the other', (t) => {
  const f = file(t);
  fs.writeFileSync(f, '{"ok":1}\n{"torn":');
  const { sealed } = appendLines(f, ['{"next":true}']);
  assert.equal(sealed, true);
  assert.deepEqual(readLines(f).lines.map((l) => l.text), ['{"ok":1}', '{"torn":', '{"next":true}']);
});

test('a UTF-8 BOM and CRLF line ends are stripped from the text', (t) => {
  const f = file(t);
  fs.writeFileSync(f, '\uFEFF{"a":1}\r\n{"b":2}\r\n');
  assert.deepEqual(readLines(f).lines.map((l) => l.text), ['{"a":1}', '{"b":2}']);
});

test('bytes that are not UTF-8 are flagged, not thrown', (t) => {
  const f = file(t);
  fs.writeFileSync(f, Buffer.concat([Buffer.from('{"a":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}\nok\n')]));
  const r = readLines(f);
  assert.equal(r.lines[0]?.badUtf8, true);
  assert.equal(r.lines[1]?.badUtf8, false);
  assert.equal(r.lines[1]?.text, 'ok');
});

test('a 10 MB line spanning many read chunks comes back whole', (t) => {
  const f = file(t);
  const big = JSON.stringify({ type: 'user.message', content: 'x'.repeat(10 * 1024 * 1024) });
  appendLines(f, ['{"before":1}', big, '{"after":1}']);
  const r = readLines(f);
  assert.equal(r.lines.length, 3);
  assert.equal(r.lines[1]?.text.length, big.length);
  assert.equal(r.lines[1]?.oversize, false);
  assert.equal(r.lines[2]?.no, 3);
});

test('a line over the size limit is reported as oversize with its head, and later lines still read', { timeout: 60_000 }, (t) => {
  const f = file(t);
  const fd = fs.openSync(f, 'w');
  fs.writeSync(fd, '{"x":"');
  const chunk = Buffer.alloc(4 * 1024 * 1024, 0x61);
  for (let n = 0; n <= MAX_LINE_BYTES / chunk.length; n++) fs.writeSync(fd, chunk);
  fs.writeSync(fd, '"}\n{"after":1}\n');
  fs.closeSync(fd);
  const r = readLines(f);
  assert.equal(r.lines.length, 2);
  assert.equal(r.lines[0]?.oversize, true);
  assert.ok(r.lines[0]!.text.startsWith('{"x":"aaa'));
  assert.ok(r.lines[0]!.text.length <= 4096);
  assert.ok(r.lines[0]!.bytes > MAX_LINE_BYTES);
  assert.deepEqual([r.lines[1]?.no, r.lines[1]?.text], [2, '{"after":1}']);
});

test('a replaced file (new inode) is read from the start and flagged as reset', (t) => {
  const f = file(t);
  appendLines(f, ['a', 'b']);
  const r1 = readLines(f);
  fs.writeFileSync(`${f}.new`, 'x\n');
  fs.renameSync(`${f}.new`, f);
  const r2 = readLines(f, r1.cursor);
  assert.equal(r2.reset, true);
  assert.deepEqual(r2.lines.map((l) => [l.no, l.text]), [[1, 'x']]);
});

test('readLinesBefore returns the tail with correct line numbers', (t) => {
  const f = file(t);
  appendLines(f, Array.from({ length: 1000 }, (_, i) => `line-${i + 1}`));
  const end = readLines(f).cursor;
  const tail = readLinesBefore(f, end, 50);
  assert.ok(tail.length >= 5 && tail.length < 1000);
  const last = tail[tail.length - 1]!;
  assert.deepEqual([last.no, last.text], [1000, 'line-1000']);
  for (const l of tail) assert.equal(l.text, `line-${l.no}`);
  const all = readLinesBefore(f, end, 10 ** 9);
  assert.equal(all.length, 1000);
  assert.deepEqual([all[0]?.no, all[0]?.text], [1, 'line-1']);
  assert.deepEqual(readLinesBefore(f, START, 10), []);
});

test('appendLines refuses a line with a newline in it', (t) => {
  const f = file(t);
  assert.throws(() => appendLines(f, ['a\nb']), /must not contain/);
  assert.equal(fs.existsSync(f), false);
});

test('readLinesBefore keeps a last line longer than the bytes asked for', (t) => {
  const f = file(t);
  const long = `{"x":"${'y'.repeat(50_000)}"}`;
  appendLines(f, ['first', long]);
  const end = readLines(f).cursor;
  const tail = readLinesBefore(f, end, 1000);
  const last = tail[tail.length - 1]!;
  assert.deepEqual([last.no, last.text.length], [2, long.length], 'the long last line comes back whole');
});

test('reads share one read buffer: a journal read allocates no megabyte, and lines read before stay whole across reads', (t) => {
  const a = file(t);
  const b = `${a}.b`;
  // Lines longer than the read buffer's megabyte, so they span reads, in two files read in turn.
  appendLines(a, ['a'.repeat(1_500_000), 'short a']);
  appendLines(b, ['b'.repeat(1_200_000), 'short b']);
  readLines(a); // the first read of the process may make the buffer
  const big: number[] = [];
  const allocUnsafe = Buffer.allocUnsafe;
  Buffer.allocUnsafe = ((size: number) => {
    if (size >= 1 << 20) big.push(size);
    return allocUnsafe(size);
  }) as typeof Buffer.allocUnsafe;
  try {
    const end = { offset: fs.statSync(a).size, line: 2, ino: fs.statSync(a).ino };
    for (let i = 0; i < 50; i++) readLines(a, end);
    appendLines(a, ['more']);
    assert.deepEqual(readLines(a, end).lines.map((l) => l.text), ['more']);
  } finally {
    Buffer.allocUnsafe = allocUnsafe;
  }
  const first = readLines(a);
  const second = readLines(b);
  assert.deepEqual(big, [], 'no megabyte allocated per read');
  assert.deepEqual(first.lines.map((l) => [l.text.length, l.text[0], l.text.at(-1)]), [[1_500_000, 'a', 'a'], [7, 's', 'a'], [4, 'm', 'e']]);
  assert.deepEqual(second.lines.map((l) => [l.text.length, l.text[0], l.text.at(-1)]), [[1_200_000, 'b', 'b'], [7, 's', 'b']]);
});

test('a FIFO at a journal\'s name is refused with an error by every reader, without blocking', (t) => {
  const f = file(t);
  execFileSync('mkfifo', [f]);
  // In a child: a read that blocks on the FIFO would block this process too, for good.
  const r = runInChild(`
    import { appendLines, readLines, readFirstLine, readLinesBefore, sealTail } from ${source('src/core/store/jsonl.ts')};
    import { journalStamp } from ${source('src/core/store/fold-cache.ts')};
    const f = ${JSON.stringify(f)};
    const out = {};
    const tryIt = (name, fn) => { try { fn(); out[name] = 'returned'; } catch (e) { out[name] = e.message; } };
    tryIt('readLines', () => readLines(f));
    tryIt('readFirstLine', () => readFirstLine(f));
    tryIt('readLinesBefore', () => readLinesBefore(f, { offset: 10, line: 1, ino: 0 }, 10));
    tryIt('journalStamp', () => journalStamp({ events: f, wakeQueue: f }));
    tryIt('appendLines', () => appendLines(f, ['{"a":1}']));
    tryIt('sealTail', () => sealTail(f));
    console.log(JSON.stringify(out));
  `);
  assert.equal(r.timedOut, false, 'the reads and appends returned instead of blocking on a FIFO');
  assert.equal(r.status, 0, r.stderr);
  const msg = 'ENXIO: not a regular file, read';
  // An append opens non-blocking: with no reader on the FIFO the open itself fails (ENXIO from the kernel).
  const out = JSON.parse(r.stdout) as Record<string, string>;
  assert.match(out.appendLines!, /ENXIO/);
  assert.deepEqual({ ...out, appendLines: null }, { readLines: msg, readFirstLine: msg, readLinesBefore: msg, journalStamp: msg, appendLines: null, sealTail: 'returned' });
});

test('a journal is not read through a symlink; a folder there is refused as before (EISDIR)', (t) => {
  const f = file(t);
  const real = `${f}.real`;
  appendLines(real, ['{"a":1}']);
  fs.symlinkSync(real, f);
  assert.throws(() => readLines(f), (e: NodeJS.ErrnoException) => e.code === 'ELOOP');
  // Nor appended to through one: the file it points at is left as it was.
  assert.throws(() => appendLines(f, ['{"b":2}']), (e: NodeJS.ErrnoException) => e.code === 'ELOOP');
  fs.writeFileSync(real, '{"a":1}\n{"half');
  assert.equal(sealTail(f), false);
  assert.equal(fs.readFileSync(real, 'utf8'), '{"a":1}\n{"half');
  fs.unlinkSync(f);
  fs.mkdirSync(f);
  assert.throws(() => readLines(f), (e: NodeJS.ErrnoException) => e.code === 'EISDIR');
});
