/** The file tools against what an agent can throw at the daemon: patterns, growing files. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { bench, toolResults } from '../helpers/run.js';
import { compileGlob } from '../../src/core/sandbox/search-patterns.js';
import { readAtMost } from '../../src/core/sandbox/beneath.js';

test('glob: an extglob nest that aborts V8 and an over-long pattern are refused, not compiled', () => {
  const nested = `${'!('.repeat(3000)}a${')'.repeat(3000)}`;
  assert.match(String(compileGlob(nested)), /pattern is \d+ characters; at most 512/);
  const many = '*a'.repeat(30);
  assert.match(String(compileGlob(many)), /pattern has 30 wildcards; at most 24/);
  // extglob syntax is literal text, so even a short nest compiles to a plain pattern
  assert.ok(compileGlob('!(!(!(a)))') instanceof RegExp);
  assert.ok((compileGlob('**/*.{md,txt}') as RegExp).test('docs/a.md'));
});

test('glob: a pattern that backtracks on a long name is stopped by the deadline, off the event loop', async (t) => {
  const b = await bench(t, {
    steps: [{ toolUses: [{ id: 'toolu_g', name: 'glob', input: { pattern: '*a*a*a*a*a*a*a*a*a*a*b' } }] }, { text: 'ok' }],
    agent: { environment: 'fast' },
  });
  b.h.write('environments/fast.yaml', 'sandbox: auto\nnetwork: none\nshell:\n  timeout_seconds: 1\n');
  const id = b.session('find');
  fs.writeFileSync(path.join(b.store.paths(id).workspace, 'a'.repeat(200)), '');
  let ticks = 0;
  let tickGoal = Infinity;
  let reached = () => {};
  const ticker = setInterval(() => ++ticks >= tickGoal && reached(), 50);
  try {
    const running = b.wake(id);
    // The deadline is a timer of the run's (manual) clock. Once glob has armed it, the event loop must
    // keep turning while the worker backtracks; then the test lets the deadline pass.
    await b.deps.clock.armed(1000);
    await new Promise<void>((resolve) => {
      reached = resolve;
      tickGoal = ticks + 5;
    });
    await b.deps.clock.advance(1000);
    await running;
  } finally {
    clearInterval(ticker);
  }
  const res = toolResults(b.fake.requests[1]!).get('toolu_g')!;
  assert.equal(res.isError, true);
  assert.match(res.text, /glob stopped after 1000 ms/);
  assert.ok(ticks >= 5, `the event loop kept turning while glob matched (${ticks} ticks)`);
});

test('readAtMost bounds what is read, whatever the size seen at open said', (t) => {
  const dir = fs.mkdtempSync(path.join(process.env.TMPDIR ?? '/tmp', 'openboa-read-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const f = path.join(dir, 'grows');
  fs.writeFileSync(f, '');
  const fd = fs.openSync(f, 'r');
  t.after(() => fs.closeSync(fd));
  // empty at open (size hint 0), 1 MB by the time it is read: more than a 64 KB limit
  fs.writeFileSync(f, Buffer.alloc(1024 * 1024, 0x61));
  assert.equal(readAtMost(fd, 64 * 1024, 0), null);
  assert.equal(readAtMost(fd, 2 * 1024 * 1024, 0)!.length, 1024 * 1024);
  assert.equal(readAtMost(fd, 1024 * 1024, 10)!.length, 1024 * 1024, 'exactly the limit is fine');
});

test('read of a huge directory lists a bounded, sorted part and says there is more', async (t) => {
  const b = await bench(t, { steps: [{ toolUses: [{ id: 'toolu_r', name: 'read', input: { file_path: '/workspace/big' } }] }, { text: 'ok' }] });
  const id = b.session('look');
  const big = path.join(b.store.paths(id).workspace, 'big');
  fs.mkdirSync(big);
  for (let i = 0; i < 2500; i++) fs.writeFileSync(path.join(big, `f${String(i).padStart(5, '0')}`), '');
  await b.wake(id);
  const text = toolResults(b.fake.requests[1]!).get('toolu_r')!.text.split('\n');
  assert.equal(text.length, 2001);
  assert.match(text[2000]!, /more entries not shown/);
  const names = text.slice(0, 2000);
  assert.deepEqual(names, [...names].sort());
});

test('grep: a pattern long or nested enough to crash the regexp compiler is refused before it is compiled', async (t) => {
  const nest = `${'(?:a|'.repeat(40)}b${')*'.repeat(40)}`;
  const long = 'a'.repeat(2001);
  const b = await bench(t, { steps: [{ toolUses: [{ id: 'toolu_n', name: 'grep', input: { pattern: nest } }, { id: 'toolu_l', name: 'grep', input: { pattern: long } }, { id: 'toolu_ok', name: 'grep', input: { pattern: '(a|(b|c))[()]' } }] }, { text: 'ok' }] });
  const id = b.session('search');
  await b.wake(id);
  const res = toolResults(b.fake.requests[1]!);
  assert.match(res.get('toolu_n')!.text, /pattern nests groups 40 deep; at most 32/);
  assert.match(res.get('toolu_l')!.text, /pattern is 2001 characters; at most 2000/);
  assert.equal(res.get('toolu_ok')!.isError, false, 'parentheses in a class do not count');
});
