/**
 * The sandbox port's contract suite (STYLE 8): one scenario of file
 * operations, run against the memory sandbox and against the host sandbox
 * on a temp dir, must give the same answers step for step. That is what
 * keeps the fake the tool tests use from drifting from the real one.
 * Then what only a shell can show: exec and the file operations see the
 * same files, and host paths are hidden where the agent cannot see them
 * (bubblewrap; skipped where it does not work).
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { systemClock } from '../../src/core/foundation/clock.js';
import { Redactor } from '../../src/core/foundation/redact.js';
import { hostSandbox } from '../../src/core/sandbox/host-sandbox.js';
import type { Isolation } from '../../src/core/sandbox/isolation.js';
import { MemorySandbox, type MemoryExec } from '../../src/core/sandbox/memory-sandbox.js';
import { isFailure, type Sandbox } from '../../src/core/sandbox/sandbox.js';
import { tempHome } from '../helpers/home.js';
import { BWRAP } from '../helpers/run.js';

const FACTS = '{"isolation":"test"}';
const DATA = 'mounted data\n';

/** A host sandbox over a temp dir: /workspace (rw), /runtime (ro, with facts.json), /data (ro, with d.txt). */
function host(t: TestContext, isolation: Isolation, o: { unavailable?: string } = {}) {
  const h = tempHome(t, { bundled: false });
  const ws = path.join(h.root, 'ws');
  const rt = path.join(h.root, 'rt');
  const data = path.join(h.root, 'data');
  for (const d of [ws, rt, data]) fs.mkdirSync(d);
  fs.writeFileSync(path.join(rt, 'facts.json'), FACTS);
  fs.writeFileSync(path.join(data, 'd.txt'), DATA);
  const homeDir = isolation === 'bwrap' ? '/workspace' : ws;
  const sb = hostSandbox({
    isolation,
    network: 'none',
    mounts: [
      { host: ws, target: '/workspace', writable: true },
      { host: rt, target: '/runtime', writable: false },
      { host: data, target: '/data', writable: false },
    ],
    env: { PATH: '/usr/bin:/bin', HOME: homeDir },
    homeDir,
    workspaceHost: ws,
    runtimeDir: rt,
    redactor: Redactor.none,
    clock: systemClock,
    unavailable: o.unavailable ?? null,
  });
  t.after(() => sb.close());
  return { sb, ws };
}

/** The same starting state in memory. */
function memory(exec?: MemoryExec) {
  return new MemorySandbox({
    files: { '/runtime/facts.json': FACTS, '/data/d.txt': DATA },
    mounts: [
      { target: '/workspace', writable: true },
      { target: '/runtime', writable: false },
      { target: '/data', writable: false },
    ],
    ...(exec ? { exec } : {}),
  });
}

/** Results as plain data: contents as text, glob matches without their mtimes (the clocks differ). */
function plain(r: unknown): unknown {
  if (isFailure(r)) return { code: r.code, error: r.error };
  if (r && typeof r === 'object' && 'data' in r) {
    const c = r as { virtual: string; data: Buffer | null };
    return { virtual: c.virtual, data: c.data === null ? null : c.data.toString('utf8') };
  }
  if (r && typeof r === 'object' && 'files' in r) {
    const g = r as { files: Array<{ virtual: string }>; truncated: boolean };
    return { files: g.files.map((f) => f.virtual), truncated: g.truncated };
  }
  return r;
}

/** The scenario: every file operation, the ordinary cases and the refusals. Returns [step, answer] pairs. */
async function scenario(sb: Sandbox): Promise<Array<[string, unknown]>> {
  const signal = new AbortController().signal;
  const search = { signal, timeoutMs: 10_000, maxEntries: 1000 };
  const grep = { ...search, maxMatches: 100, maxFileBytes: 1 << 20, maxTotalBytes: 1 << 24 };
  const read = { signal, maxBytes: 1 << 20 };
  const steps: Array<[string, () => Promise<unknown>]> = [
    ['write a file and its parents', () => sb.write('src/app.txt', 'alpha\nbeta\n', { signal })],
    ['write an absolute path', () => sb.write('/workspace/docs/readme.md', '# hi\nbeta\n', { signal })],
    ['write a binary file', () => sb.write('bin.dat', 'beta\u0000beta', { signal })],
    ['write through ..', () => sb.write('src/../top.txt', 'top', { signal })],
    ['write to a read-only mount', () => sb.write('/runtime/x.json', '{}', { signal })],
    ['write to a read-only mount root', () => sb.write('/data', 'x', { signal })],
    ['write outside', () => sb.write('../escape.txt', 'x', { signal })],
    ['write below a file', () => sb.write('src/app.txt/below', 'x', { signal })],
    ['write over a directory', () => sb.write('src', 'x', { signal })],
    ['write over the workspace', () => sb.write('/workspace', 'x', { signal })],
    ['write a NUL path', () => sb.write('a\u0000b', 'x', { signal })],
    ['read', () => sb.read('src/app.txt', read)],
    ['read past maxBytes', () => sb.read('/runtime/facts.json', { signal, maxBytes: 3 })],
    ['read exactly maxBytes', () => sb.read('top.txt', { signal, maxBytes: 3 })],
    ['read another mount', () => sb.read('/data/d.txt', read)],
    ['read a directory', () => sb.read('src', read)],
    ['read a missing file', () => sb.read('nope.txt', read)],
    ['read below a missing directory', () => sb.read('/workspace/missing/x', read)],
    ['read below a file', () => sb.read('src/app.txt/x', read)],
    ['read outside', () => sb.read('/etc/passwd', read)],
    ['read the root', () => sb.read('/', read)],
    ['list the workspace', () => sb.list('/workspace', { signal, max: 100 })],
    // Which entries a bounded listing shows is the file system's order on the host: only how many is the contract.
    ['list, bounded', async () => {
      const r = await sb.list('/workspace', { signal, max: 2 });
      return isFailure(r) ? r : { count: r.names.length, more: r.more };
    }],
    ['list a file', () => sb.list('src/app.txt', { signal, max: 100 })],
    ['list outside', () => sb.list('/home', { signal, max: 100 })],
    ['modify', () => sb.modify('src/app.txt', (c) => (c ? c.toString('utf8').replace('alpha', 'ALPHA') : null), read)],
    ['read the change', () => sb.read('src/app.txt', read)],
    ['modify, left as it was', () => sb.modify('src/app.txt', () => null, read)],
    ['modify past maxBytes', () => sb.modify('src/app.txt', (c) => (c === null ? 'was too big' : 'fit'), { signal, maxBytes: 2 })],
    ['modify a missing file', () => sb.modify('nope.txt', () => 'x', read)],
    ['modify a directory', () => sb.modify('docs', () => 'x', read)],
    ['modify on a read-only mount', () => sb.modify('/runtime/facts.json', () => 'x', read)],
    ['glob everything', () => sb.glob('**/*', search)],
    ['glob from a path', () => sb.glob('*.md', { ...search, path: 'docs' })],
    ['glob across mounts', () => sb.glob('*.txt', { ...search, path: '/data' })],
    ['glob, truncated', () => sb.glob('**/*', { ...search, maxEntries: 2 })],
    ['glob from a file', () => sb.glob('*', { ...search, path: 'src/app.txt' })],
    ['glob from a missing path', () => sb.glob('*', { ...search, path: 'nope' })],
    ['glob a refused pattern', () => sb.glob('*a'.repeat(30), search)],
    ['glob, stopped', () => sb.glob('*', { ...search, signal: AbortSignal.abort() })],
    ['grep everything', () => sb.grep('beta|hi', grep)],
    ['grep a file', () => sb.grep('^b', { ...grep, path: '/workspace/docs/readme.md' })],
    ['grep, few lines shown', () => sb.grep('.', { ...grep, maxMatches: 1 })],
    ['grep, small files only', () => sb.grep('.', { ...grep, maxFileBytes: 4 })],
    ['grep, a byte budget', () => sb.grep('.', { ...grep, maxTotalBytes: 12 })],
    ['grep, truncated', () => sb.grep('.', { ...grep, maxEntries: 3 })],
    ['grep an invalid pattern', () => sb.grep('(', grep)],
    ['grep outside', () => sb.grep('x', { ...grep, path: '/proc' })],
    ['grep, stopped', () => sb.grep('beta', { ...grep, signal: AbortSignal.abort() })],
  ];
  const out: Array<[string, unknown]> = [];
  for (const [name, run] of steps) out.push([name, plain(await run())]);
  return out;
}

test('the memory sandbox answers the file scenario exactly as the host sandbox does', async (t) => {
  const { sb: real } = host(t, 'unconfined');
  const fake = memory();
  const [want, got] = [await scenario(real), await scenario(fake)];
  for (let i = 0; i < want.length; i++) assert.deepEqual(got[i], want[i], `step ${i}: ${want[i]![0]}`);
  // ... and what they both say is what the tools promise (not two sandboxes wrong the same way).
  const at = new Map(want);
  assert.deepEqual(at.get('write a file and its parents'), { virtual: '/workspace/src/app.txt', bytes: 11 });
  assert.deepEqual(at.get('write outside'), { code: 'refused', error: '../escape.txt: outside the workspace (/escape.txt is not under /workspace)' });
  assert.deepEqual(at.get('write to a read-only mount'), { code: 'refused', error: '/runtime/x.json: /runtime is read-only' });
  assert.deepEqual(at.get('read outside'), { code: 'refused', error: '/etc/passwd: outside the workspace (/etc is not under /workspace, /runtime, /data)' });
  assert.deepEqual(at.get('read below a missing directory'), { code: 'ENOENT', error: '/workspace/missing: no such file or directory' });
  assert.deepEqual(at.get('read a directory'), { code: 'EISDIR', error: '/workspace/src: is a directory' });
  assert.deepEqual(at.get('list the workspace'), { virtual: '/workspace', names: ['bin.dat', 'docs/', 'src/', 'top.txt'], more: false });
  assert.deepEqual(at.get('read the change'), { virtual: '/workspace/src/app.txt', data: 'ALPHA\nbeta\n' });
  assert.deepEqual(at.get('modify past maxBytes'), { virtual: '/workspace/src/app.txt', written: true });
  assert.deepEqual(at.get('glob everything'), { files: ['/workspace/bin.dat', '/workspace/docs/readme.md', '/workspace/src/app.txt', '/workspace/top.txt'], truncated: false });
  assert.deepEqual(at.get('grep everything'), { lines: ['/workspace/docs/readme.md:1:# hi', '/workspace/docs/readme.md:2:beta'], total: 2, stoppedAtBytes: false, truncated: false });
  assert.deepEqual(at.get('grep, few lines shown'), { lines: ['/workspace/docs/readme.md:1:# hi'], total: 4, stoppedAtBytes: false, truncated: false });
  assert.deepEqual(at.get('grep, truncated'), { lines: ['/workspace/docs/readme.md:1:# hi', '/workspace/docs/readme.md:2:beta'], total: 2, stoppedAtBytes: false, truncated: true });
  assert.deepEqual(at.get('glob, stopped'), { code: 'interrupted', error: 'glob was interrupted' });
  assert.deepEqual(at.get('grep, stopped'), { code: 'interrupted', error: 'grep was interrupted' });
});

test('exec: the same result fields from both; without a shell, exec and restart fail with no_shell', async (t) => {
  const { sb: real, ws } = host(t, 'unconfined');
  const fake = memory(() => 'hi');
  const signal = new AbortController().signal;
  const a = await real.exec('printf hi', { signal, timeoutMs: 10_000 });
  const b = await fake.exec('printf hi', { signal, timeoutMs: 10_000 });
  assert.deepEqual(a, { output: 'hi', exitCode: 0, timedOut: false, interrupted: false, shellDied: false, cwd: ws });
  assert.deepEqual(b, { output: 'hi', exitCode: 0, timedOut: false, interrupted: false, shellDied: false, cwd: '/workspace' });
  assert.equal(await real.restart({ signal }), null);
  assert.equal(await fake.restart({ signal }), null);

  const { sb: none } = host(t, 'unconfined', { unavailable: 'no isolation works here' });
  const empty = memory();
  for (const sb of [none, empty]) {
    const e = await sb.exec('true', { signal, timeoutMs: 10_000 });
    const r = await sb.restart({ signal });
    assert.ok(isFailure(e) && isFailure(r), JSON.stringify([e, r]));
    assert.deepEqual([e.code, r.code], ['no_shell', 'no_shell']);
  }
  assert.equal((await none.exec('true', { signal, timeoutMs: 10_000 }) as { error: string }).error, 'no sandbox: no isolation works here');
  // Unconfined, the shell's host paths are its real ones: nothing is hidden (and the memory sandbox has none).
  assert.equal(real.hideHostPaths(`${ws}/a.txt`), `${ws}/a.txt`);
  assert.equal(fake.hideHostPaths('/x/y'), '/x/y');
});

test('under bubblewrap, the shell and the file operations see the same /workspace, and host paths are hidden', { skip: BWRAP ? false : 'needs bubblewrap (the shell runs on the host otherwise, where host paths are its real ones)' }, async (t) => {
  const { sb, ws } = host(t, 'bwrap');
  const signal = new AbortController().signal;
  assert.deepEqual(await sb.write('src/app.txt', 'from the daemon', { signal }), { virtual: '/workspace/src/app.txt', bytes: 15 });
  const r = await sb.exec('cat src/app.txt; echo from-the-shell > made.txt; pwd; cat /data/d.txt', { signal, timeoutMs: 10_000 });
  assert.ok(!isFailure(r), JSON.stringify(r));
  assert.equal(r.output, `from the daemon/workspace\n${DATA.trimEnd()}`);
  assert.equal(r.cwd, '/workspace');
  const made = await sb.read('made.txt', { signal, maxBytes: 100 });
  assert.ok(!isFailure(made) && made.data?.toString('utf8') === 'from-the-shell\n', JSON.stringify(made));
  assert.equal(sb.hideHostPaths(`cannot open ${ws}/a.txt`), 'cannot open /workspace/a.txt');
  sb.close();
  sb.close(); // idempotent
});
