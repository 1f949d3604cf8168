/**
 * The memory directory's host side (docs/memory.md): the scan that versions
 * what bash changed survives what the agent can plant in /memory, atomic
 * bounded writes, MEMORY.md's prompt section, restore, and the learnings
 * journal's redaction.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { tempHome } from '../helpers/home.js';
import { ManualClock } from '../helpers/clock.js';
import { hostSandbox } from '../../src/core/sandbox/host-sandbox.js';
import { Redactor } from '../../src/core/foundation/redact.js';
import { isFailure } from '../../src/core/sandbox/sandbox.js';
import { MemorySandbox } from '../../src/core/sandbox/memory-sandbox.js';
import { memoryPromptSection, restoreVersion } from '../../src/core/memory/memory-dir.js';
import { newScanState, scanAndRecord } from '../../src/core/memory/memory-scan.js';
import { memoryVersioned, readContent, readVersions, sha256Of } from '../../src/core/memory/version-store.js';
import { DEFAULT_MEMORY_SETTINGS, MEMORY_DOCUMENT_MAX_BYTES, MemorySettings } from '../../src/core/schema/index.js';
import { appendLearning } from '../../src/core/memory/learnings.js';
import { renderLearningsFile } from '../../src/core/memory/learnings-file.js';
import { recordingSandbox } from '../../src/core/memory/recording-sandbox.js';
import { cliInProcess } from '../helpers/cli.js';

const who = { session_id: 'sess', wake_id: 'wrun_1' };
const signal = new AbortController().signal;

function setup(t: Parameters<typeof tempHome>[0]) {
  const h = tempHome(t);
  const home = h.home;
  const v = memoryVersioned(home, 'a');
  fs.mkdirSync(v.dir, { recursive: true });
  return { h, home, v, clock: new ManualClock(Date.parse('2026-11-23T10:00:00Z')) };
}

test('the scan records writes, changes and deletes against the log, once each', async (t) => {
  const { v, clock } = setup(t);
  const st = newScanState(v);
  fs.mkdirSync(path.join(v.dir, 'notes'));
  fs.writeFileSync(path.join(v.dir, 'notes', 'a.md'), 'one');
  fs.writeFileSync(path.join(v.dir, 'LEARNINGS.md'), 'derived');
  let lines = await scanAndRecord(v, st, who, clock);
  assert.deepEqual(lines.map((l) => [l.op, l.path, l.sha256]), [['write', 'notes/a.md', sha256Of(Buffer.from('one'))]], 'LEARNINGS.md is not versioned');
  assert.deepEqual(await scanAndRecord(v, st, who, clock), [], 'nothing changed: nothing recorded');
  // Another run (a fresh state) compares with the log too: no repeat.
  assert.deepEqual(await scanAndRecord(v, newScanState(v), { session_id: 'other', wake_id: 'wrun_2' }, clock), []);
  fs.writeFileSync(path.join(v.dir, 'notes', 'a.md'), 'two');
  lines = await scanAndRecord(v, st, who, clock);
  assert.deepEqual(lines.map((l) => [l.op, l.bytes]), [['write', 3]]);
  fs.rmSync(path.join(v.dir, 'notes', 'a.md'));
  lines = await scanAndRecord(v, st, who, clock);
  assert.deepEqual(lines.map((l) => [l.op, l.path, l.sha256]), [['delete', 'notes/a.md', null]]);
  const all = readVersions(v).lines.map((l) => l.line);
  assert.equal(all.length, 3);
  assert.equal(readContent(v, all[0]!.sha256!)?.toString(), 'one');
  // Restore: the old content back, atomically, logged with no session.
  const r = await restoreVersion(v, 'notes/a.md', all[0]!.sha256!, clock);
  assert.equal(fs.readFileSync(path.join(v.dir, 'notes', 'a.md'), 'utf8'), 'one');
  assert.deepEqual([r.op, r.session_id, r.wake_id], ['restore', null, null]);
  assert.deepEqual(await scanAndRecord(v, st, who, clock), [], 'a restore is not recorded again by the next scan');
});

test('the scan survives a symlink to /etc, a FIFO, a huge sparse file, a deep tree and many entries planted in /memory', async (t) => {
  const { v, clock } = setup(t);
  fs.symlinkSync('/etc', path.join(v.dir, 'etc'));
  fs.symlinkSync('/etc/passwd', path.join(v.dir, 'passwd.md'));
  execFileSync('mkfifo', [path.join(v.dir, 'pipe.md')]);
  const huge = path.join(v.dir, 'huge.md');
  fs.closeSync(fs.openSync(huge, 'w'));
  fs.truncateSync(huge, 20 * 1024 * 1024 * 1024); // 20 GB, sparse: reading it would take minutes
  let deep = v.dir;
  for (let i = 0; i < 100; i++) deep = path.join(deep, 'd');
  fs.mkdirSync(deep, { recursive: true });
  fs.writeFileSync(path.join(deep, 'bottom.md'), 'too deep');
  fs.mkdirSync(path.join(v.dir, 'many'));
  for (let i = 0; i < 3000; i++) fs.writeFileSync(path.join(v.dir, 'many', `f${i}`), '');
  fs.writeFileSync(path.join(v.dir, 'MEMORY.md'), 'real');
  // Untimed, so a loaded machine cannot cut the walk short before MEMORY.md: what bounds it here are the
  // entries, the bytes and the depth (the time budget has its own test in memory-scan.test.ts).
  const untimed = { walkBudgetMs: Infinity, storeBudgetMs: Infinity };
  const started = Date.now();
  const lines = await scanAndRecord(v, newScanState(v, untimed), who, clock);
  assert.ok(Date.now() - started < 60_000, 'bounded without a time budget');
  const byPath = new Map(lines.map((l) => [l.path, l]));
  assert.equal(byPath.get('MEMORY.md')?.op, 'write');
  assert.deepEqual([byPath.get('huge.md')?.op, byPath.get('huge.md')?.sha256, byPath.get('huge.md')?.bytes], ['too_large', null, 20 * 1024 * 1024 * 1024]);
  for (const p of ['etc', 'passwd.md', 'pipe.md']) assert.equal(byPath.has(p), false, `${p} is not followed or read`);
  assert.ok(![...byPath.keys()].some((p) => p.startsWith('etc/')));
  assert.ok(![...byPath.keys()].some((p) => p.endsWith('bottom.md')), 'deeper than the walk goes: left out');
  assert.match(byPath.get('.')?.message ?? '', /deeper than the scan goes/, 'and the log says the scan stopped short');
  // Nothing of /etc reached the store.
  const stored = fs.readdirSync(v.store, { recursive: true, withFileTypes: true }).filter((d) => d.isFile()).map((d) => fs.readFileSync(path.join(d.parentPath, d.name), 'utf8'));
  assert.ok(!stored.some((s) => s.includes('root:')));
  // The many empty files are recorded by the next scans (at most MEMORY_SCAN_MAX_CHANGES lines a scan); the huge file, unchanged, is not recorded twice.
  // Bounded by lines here too: 3,000 files at MEMORY_SCAN_MAX_CHANGES a scan take three scans, the fourth finds nothing new.
  const st = newScanState(v, untimed);
  for (let i = 0; i < 4; i++) await scanAndRecord(v, st, who, clock);
  const again = await scanAndRecord(v, newScanState(v, untimed), who, clock);
  assert.deepEqual(again.filter((l) => l.op !== 'scan_incomplete').map((l) => l.path), []);
  assert.equal(readVersions(v).lines.filter((l) => l.line.path === 'huge.md').length, 1);
});

test('MEMORY.md in the prompt: cut at prompt_bytes with a note; a FIFO or a symlink there is ignored without blocking', (t) => {
  const { v, home } = setup(t);
  const settings = MemorySettings.parse({ prompt_bytes: 100 });
  assert.equal(memoryPromptSection(home, 'a', settings), null, 'no MEMORY.md: no section');
  fs.writeFileSync(path.join(v.dir, 'MEMORY.md'), `remember the blue door\n${'é'.repeat(500)}`);
  const s = memoryPromptSection(home, 'a', settings)!;
  assert.match(s, /^# Memory\n/);
  assert.match(s, /remember the blue door/);
  assert.match(s, /\[MEMORY\.md is 1023 bytes; only its first (99|100) are shown here \(the prompt holds 100\)\. Read \/memory\/MEMORY\.md for the rest\.\]$/);
  assert.ok(!s.includes('\ufffd'), 'cut at a character boundary');
  assert.equal(memoryPromptSection(home, 'a', MemorySettings.parse('none')), null);
  assert.match(memoryPromptSection(home, 'a', DEFAULT_MEMORY_SETTINGS)!, /read-write/);
  fs.rmSync(path.join(v.dir, 'MEMORY.md'));
  execFileSync('mkfifo', [path.join(v.dir, 'MEMORY.md')]);
  assert.equal(memoryPromptSection(home, 'a', settings), null);
  fs.rmSync(path.join(v.dir, 'MEMORY.md'));
  fs.symlinkSync('/etc/passwd', path.join(v.dir, 'MEMORY.md'));
  assert.equal(memoryPromptSection(home, 'a', settings), null);
});

test('writes into an atomic mount replace the file whole, refuse a document over the bound, and never write through a planted symlink', async (t) => {
  const { h, v } = setup(t);
  const ws = path.join(h.root, 'ws');
  fs.mkdirSync(ws);
  const outside = path.join(h.root, 'outside.txt');
  fs.writeFileSync(outside, 'untouched');
  const sb = hostSandbox({
    isolation: 'unconfined',
    network: 'none',
    mounts: [
      { host: ws, target: '/workspace', writable: true },
      { host: v.dir, target: '/memory', writable: true, atomic: true, maxFileBytes: MEMORY_DOCUMENT_MAX_BYTES },
    ],
    env: {},
    homeDir: ws,
    workspaceHost: ws,
    runtimeDir: path.join(h.root, 'rt'),
    redactor: Redactor.none,
    clock: new ManualClock(0),
    unavailable: 'no shell in this test',
  });
  t.after(() => sb.close());
  const w = await sb.write('/memory/notes/a.md', 'hello', { signal });
  assert.ok(!isFailure(w) && w.virtual === '/memory/notes/a.md');
  const ino = fs.statSync(path.join(v.dir, 'notes', 'a.md')).ino;
  await sb.write('/memory/notes/a.md', 'hello again', { signal });
  assert.notEqual(fs.statSync(path.join(v.dir, 'notes', 'a.md')).ino, ino, 'replaced by a rename, not rewritten in place');
  const m = await sb.modify('/memory/notes/a.md', (c) => `${c}!`, { signal, maxBytes: 1e6 });
  assert.ok(!isFailure(m) && m.written);
  assert.equal(fs.readFileSync(path.join(v.dir, 'notes', 'a.md'), 'utf8'), 'hello again!');
  // Over the bound: refused with a clear error, nothing written.
  const big = await sb.write('/memory/big.md', 'x'.repeat(MEMORY_DOCUMENT_MAX_BYTES + 1), { signal });
  assert.ok(isFailure(big) && big.code === 'too_large');
  assert.match(big.error, /^\/memory\/big\.md: 100001 bytes is more than a document here may hold \(100000 bytes\); nothing was written/);
  assert.equal(fs.existsSync(path.join(v.dir, 'big.md')), false);
  const grow = await sb.modify('/memory/notes/a.md', () => 'y'.repeat(MEMORY_DOCUMENT_MAX_BYTES + 1), { signal, maxBytes: 1e6 });
  assert.ok(isFailure(grow) && grow.code === 'too_large');
  // Reached through a symlink in /workspace: the bound still holds.
  fs.symlinkSync('/memory/notes/a.md', path.join(ws, 'link.md'));
  const via = await sb.write('link.md', 'z'.repeat(MEMORY_DOCUMENT_MAX_BYTES + 1), { signal });
  assert.ok(isFailure(via) && via.code === 'too_large');
  // A symlink planted in /memory is replaced, never written through.
  fs.symlinkSync(outside, path.join(v.dir, 'evil.md'));
  const e = await sb.write('/memory/evil.md', 'mine', { signal });
  assert.ok(isFailure(e) || e.virtual.startsWith('/memory/'));
  assert.equal(fs.readFileSync(outside, 'utf8'), 'untouched');
  assert.deepEqual(fs.readdirSync(v.dir).filter((n) => n.endsWith('.openboa-tmp')), [], 'no temp file left behind');
  // A dangling symlink into /memory: the size is checked where the write lands, before anything is created there.
  fs.symlinkSync('/memory/MEMORY.md', path.join(ws, 'm'));
  const dangling = await sb.write('m', 'x'.repeat(150_000), { signal });
  assert.ok(isFailure(dangling) && dangling.code === 'too_large', JSON.stringify(dangling));
  assert.equal(fs.existsSync(path.join(v.dir, 'MEMORY.md')), false, 'a refused write leaves no empty file');
  const fits = await sb.write('m', 'remember', { signal });
  assert.ok(!isFailure(fits) && fits.virtual === '/memory/MEMORY.md', JSON.stringify(fits));
  assert.equal(fs.readFileSync(path.join(v.dir, 'MEMORY.md'), 'utf8'), 'remember');
  assert.equal(fs.readlinkSync(path.join(ws, 'm')), '/memory/MEMORY.md', 'written through the link, which stays');
  // The memory sandbox says the same.
  const mem = new MemorySandbox({ mounts: [{ target: '/workspace', writable: true }, { target: '/memory', writable: true, maxFileBytes: MEMORY_DOCUMENT_MAX_BYTES }] });
  const mbig = await mem.write('/memory/big.md', 'x'.repeat(MEMORY_DOCUMENT_MAX_BYTES + 1), { signal });
  assert.ok(isFailure(mbig) && isFailure(big) && mbig.code === 'too_large' && mbig.error === big.error);
});

test("a learning's text with a secret in it is redacted in learnings.jsonl and LEARNINGS.md; a FIFO planted as LEARNINGS.md does not block the render", (t) => {
  const { h, home, v } = setup(t);
  const SECRET = 'sk-live-memory-test-0123456789';
  const redactor = new Redactor({ API_TOKEN: SECRET });
  appendLearning(home, 'a', { kind: 'lesson', source: 'agent', text: `the token ${SECRET} works for staging`, tags: [SECRET], sessionId: 's', eventId: 'e', wakeId: null }, { clock: new ManualClock(0), redactor });
  execFileSync('mkfifo', [path.join(v.dir, 'LEARNINGS.md')]);
  const r = renderLearningsFile(home, 'a');
  assert.match(r.section!, /the token \[REDACTED:API_TOKEN\] works for staging/);
  const journal = fs.readFileSync(path.join(h.root, 'agents', 'a', 'learnings.jsonl'), 'utf8');
  const file = fs.readFileSync(path.join(v.dir, 'LEARNINGS.md'), 'utf8');
  for (const text of [journal, file, r.section!]) {
    assert.ok(!text.includes(SECRET));
    assert.match(text, /\[REDACTED:API_TOKEN\]/);
  }
});

test('the file tools refuse LEARNINGS.md however its path is spelled: absolute, relative to /workspace, with dots', async () => {
  const inner = new MemorySandbox({ mounts: [{ target: '/workspace', writable: true }, { target: '/memory', writable: true }] });
  const recorded: string[] = [];
  const sb = recordingSandbox(inner, '/memory', async (rel) => void recorded.push(rel), { derived: new Map([['LEARNINGS.md', 'derived; use the learn tool']]) });
  for (const p of ['/memory/LEARNINGS.md', '../memory/LEARNINGS.md', '/workspace/../memory/./LEARNINGS.md', '.././memory//LEARNINGS.md']) {
    const w = await sb.write(p, 'fake', { signal });
    assert.ok(isFailure(w) && w.code === 'refused' && w.error === '/memory/LEARNINGS.md: derived; use the learn tool', `${p}: ${JSON.stringify(w)}`);
    const m = await sb.modify(p, () => 'fake', { signal, maxBytes: 1000 });
    assert.ok(isFailure(m) && m.code === 'refused', p);
  }
  assert.equal(inner.text('/memory/LEARNINGS.md'), undefined);
  const ok = await sb.write('../memory/notes.md', 'fine', { signal });
  assert.ok(!isFailure(ok));
  assert.deepEqual(recorded, ['notes.md']);
});

/** Every run of 16 characters of `secret` found in `text`, at most a few (for the message). */
const pieces = (text: string, secret: string) => Array.from({ length: secret.length - 15 }, (_, i) => secret.slice(i, i + 16)).filter((p) => text.includes(p)).slice(0, 3);

test('a secret copied into memory/ by bash is versioned redacted, content and name; an unchanged file is not versioned again; restore writes the redacted text', async (t) => {
  const { v, clock } = setup(t);
  const TOKEN = 'tok_4bQ9zX2mLr8Wd5Kp1Hs7Vn3Jc6Ty0Fg9Ae2Ub';
  const redactor = new Redactor({ MY_TOKEN: TOKEN });
  fs.writeFileSync(path.join(v.dir, 'tok.md'), `${TOKEN}\n`);
  fs.writeFileSync(path.join(v.dir, 'frag.md'), `starts with ${TOKEN.slice(0, 30)}\n`);
  fs.writeFileSync(path.join(v.dir, `${TOKEN}.md`), 'named after it\n');
  fs.writeFileSync(path.join(v.dir, 'plain.md'), 'nothing secret\n');
  const st = newScanState(v, {}, redactor);
  const lines = await scanAndRecord(v, st, who, clock);
  assert.deepEqual(
    lines.map((l) => [l.path, readContent(v, l.sha256!)?.toString()]).sort(),
    [
      ['[REDACTED:MY_TOKEN].md', 'named after it\n'],
      ['frag.md', 'starts with [REDACTED:MY_TOKEN]\n'],
      ['plain.md', 'nothing secret\n'],
      ['tok.md', '[REDACTED:MY_TOKEN]\n'],
    ],
  );
  const stored = fs.readdirSync(v.store, { recursive: true, withFileTypes: true }).filter((d) => d.isFile()).map((d) => fs.readFileSync(path.join(d.parentPath, d.name), 'latin1'));
  assert.deepEqual(pieces(stored.join('\n') + fs.readFileSync(v.log, 'latin1'), TOKEN), [], 'neither the store nor the log holds a piece of it');
  // The file keeps what the agent wrote; the versions compare what they keep, so nothing is versioned again.
  assert.equal(fs.readFileSync(path.join(v.dir, 'tok.md'), 'utf8'), `${TOKEN}\n`);
  assert.deepEqual(await scanAndRecord(v, st, who, clock), []);
  assert.deepEqual(await scanAndRecord(v, newScanState(v, {}, redactor), who, clock), [], 'nor by the next run');
  // Restore writes back what the store holds: the redacted text.
  const tok = lines.find((l) => l.path === 'tok.md')!;
  await restoreVersion(v, 'tok.md', tok.sha256!, clock, redactor);
  assert.equal(fs.readFileSync(path.join(v.dir, 'tok.md'), 'utf8'), '[REDACTED:MY_TOKEN]\n');
});

test('a version stored raw (before versions were redacted): openboa memory show prints it redacted with a secret of any environment, as the CLI has it; restore writes it redacted', async (t) => {
  const { h, v, clock } = setup(t);
  const TOKEN = 'tok_4bQ9zX2mLr8Wd5Kp1Hs7Vn3Jc6Ty0Fg9Ae2Ub';
  h.write('agents/a/agent.yaml', 'provider: anthropic\nenvironment: local\n');
  // Not the agent's default environment: a session of it may still have been created there.
  h.write('environments/deploy.yaml', 'env:\n  MY_TOKEN: { secret: { env: OPENBOA_TEST_OLD_TOKEN } }\n');
  fs.writeFileSync(path.join(v.dir, 'old.md'), `key ${TOKEN}\n`);
  const [old] = await scanAndRecord(v, newScanState(v), who, clock);
  assert.equal(readContent(v, old!.sha256!)?.toString(), `key ${TOKEN}\n`, 'stored as it was, with no Redactor');
  const env = { OPENBOA_TEST_OLD_TOKEN: TOKEN };
  for (const args of [['memory', 'a', 'show', 'old.md'], ['memory', 'a', 'show', 'old.md', '--json']]) {
    const r = await cliInProcess(args, { home: h.root, env });
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(pieces(r.stdout, TOKEN), [], args.join(' '));
    assert.match(r.stdout, /key \[REDACTED:MY_TOKEN\]/);
  }
  const restored = await cliInProcess(['memory', 'a', 'restore', 'old.md', old!.sha256!], { home: h.root, env });
  assert.equal(restored.code, 0, restored.stderr);
  assert.equal(fs.readFileSync(path.join(v.dir, 'old.md'), 'utf8'), 'key [REDACTED:MY_TOKEN]\n');
  const last = readVersions(v).lines.at(-1)!.line;
  assert.equal(readContent(v, last.sha256!)?.toString(), 'key [REDACTED:MY_TOKEN]\n');
});
