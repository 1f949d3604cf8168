/**
 * The one-shot `openboa send` (src/cli/send-lean.ts) against the full CLI:
 * each scenario is set up once, copied, and the built binary runs the same
 * command line on each copy, once as it is (the lean path) and once with
 * OPENBOA_FULL_CLI=1 (the full CLI); stdout, stderr, the exit code and what
 * was written (the log, inbox/) must be the same, ids, times and the home's
 * path aside. And what the lean path loads: no zod, no schema, no parser,
 * no store.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestContext } from 'node:test';
import { cli, cliInProcess, CLI, type CliOptions, type CliResult } from '../helpers/cli.js';
import { REPO, tempHome } from '../helpers/home.js';
import { bench } from '../helpers/run.js';
import { lockHome } from '../../src/daemon/home-lock.js';
import { systemClock } from '../../src/core/foundation/clock.js';
import { Home } from '../../src/core/foundation/home.js';
import { leanSendForm } from '../../src/cli/send-lean-form.js';

/** A copy of the home at `root`, removed after the test. */
function copyOf(t: TestContext, root: string): string {
  const copy = fs.mkdtempSync(path.join(os.tmpdir(), 'openboa-lean-'));
  fs.cpSync(root, copy, { recursive: true });
  t.after(() => fs.rmSync(copy, { recursive: true, force: true }));
  return copy;
}

/** Every file of the home's sessions that a send writes (their logs and inbox/ files, in name order), as text. */
function written(root: string): string {
  const dir = path.join(root, 'sessions');
  if (!fs.existsSync(dir)) return '';
  const parts: string[] = [];
  for (const id of fs.readdirSync(dir).sort()) {
    const log = path.join(dir, id, 'events.jsonl');
    if (fs.existsSync(log)) parts.push(`${id}/events.jsonl\n${fs.readFileSync(log, 'utf8')}`);
    const inbox = path.join(dir, id, 'inbox');
    const drops = fs.existsSync(inbox) ? fs.readdirSync(inbox).filter((f) => !f.startsWith('.')).sort() : [];
    for (const f of drops) parts.push(`${id}/inbox/<drop>\n${fs.readFileSync(path.join(inbox, f), 'utf8')}`);
  }
  return parts.join('\n');
}

const normal = (text: string, root: string) =>
  text
    .replaceAll(root, '<HOME>')
    .replace(/sevt_[0-9a-f]{32}/g, '<EVENT>')
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g, '<TIME>');

interface Outcome extends CliResult {
  written: string;
}

/**
 * Runs `args` on a copy of `root` both ways; asserts that they agree and
 * returns what the lean path gave. `{home}` in args stands for the copy's
 * root; `opts.home` (default true) passes it as --home.
 */
async function both(t: TestContext, root: string, args: string[], opts: { home?: boolean; cwd?: string; input?: string; env?: NodeJS.ProcessEnv; before?: (root: string) => unknown } = {}): Promise<Outcome> {
  const runs: Outcome[] = [];
  for (const full of [false, true]) {
    const copy = copyOf(t, root);
    await opts.before?.(copy);
    const here = (s: string) => s.replaceAll('{home}', copy);
    const env = Object.fromEntries(Object.entries({ ...opts.env, ...(full ? { OPENBOA_FULL_CLI: '1' } : {}) }).map(([k, v]) => [k, v === undefined ? v : here(v)]));
    const o: CliOptions = { env, ...(opts.home !== false ? { home: copy } : {}), ...(opts.cwd ? { cwd: here(opts.cwd) } : {}), ...(opts.input !== undefined ? { input: opts.input } : {}) };
    const r = await cli(args.map(here), o);
    runs.push({ code: r.code, stdout: normal(r.stdout, copy), stderr: normal(r.stderr, copy), written: normal(written(copy), copy) });
  }
  const [lean, full] = runs as [Outcome, Outcome];
  assert.deepEqual(lean, full, `send ${args.join(' ')}: the lean path and the full CLI differ`);
  return lean;
}

/** A home with two sessions of the demo agent, made through the CLI (so session.json is as a send finds it). */
async function homeWithSessions(t: TestContext): Promise<{ root: string; ids: [string, string] }> {
  const { root } = tempHome(t);
  const make = async () => (await cliInProcess(['session', 'create', '--agent', 'demo'], { home: root })).stdout.trim();
  const a = await make();
  const b = await make();
  return { root, ids: [a, b] };
}

test('a one-shot send answers as the full CLI does: plain, --json, short ids, stdin, and its mistakes', async (t) => {
  const { root, ids } = await homeWithSessions(t);
  const [id, other] = ids;

  let r = await both(t, root, ['send', id, 'hello', 'there']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^<EVENT>\n$/);
  assert.match(r.stderr, /no daemon is running on this home \(<HOME>\)/);
  assert.match(r.written, /\{"id":"<EVENT>","type":"user.message","created_at":"<TIME>","content":\[\{"type":"text","text":"hello there"\}\]\}\n/);

  r = await both(t, root, ['--json', 'send', id.slice(-8), 'short id, json first']);
  assert.equal(r.code, 0);
  assert.equal(r.stderr, '');
  assert.deepEqual(Object.keys(JSON.parse(r.stdout)), ['id', 'type', 'created_at', 'notes']);
  await both(t, root, ['send', id.slice(-12, -4), '--json', 'a substring, json last']);
  await both(t, root, ['send', id.toUpperCase(), 'upper case']);
  r = await both(t, root, ['send', id, '-'], { input: 'from stdin\nsecond line\n' });
  assert.match(r.written, /"text":"from stdin\\nsecond line"/);
  await both(t, root, [`--home={home}`, 'send', id, 'home= form'], { home: false });
  await both(t, root, ['send', id, 'home from the environment'], { home: false, env: { OPENBOA_HOME: '{home}' } });
  await both(t, root, ['send', id, 'home is where it runs'], { home: false, cwd: '{home}' });

  // Mistakes: each must say the same thing, with the same exit code, and write nothing.
  const ambiguous = await both(t, root, ['send', id.slice(0, 4), 'to whom?']);
  assert.equal(ambiguous.code, 2);
  assert.match(ambiguous.stderr, new RegExp(`is ambiguous: it matches 2: ${other}, ${id}`));
  assert.equal((await both(t, root, ['send', 'ffffffffffff', 'nobody'])).code, 3);
  assert.equal((await both(t, root, ['--json', 'send', 'ffffffffffff', 'nobody'])).code, 3);
  assert.equal((await both(t, root, ['send', '-', 'an id of a dash'])).code, 3);
  assert.equal((await both(t, root, ['send', id.replace(/.$/, (c) => (c === '0' ? '1' : '0')), 'no such uuid'])).code, 3);
  assert.equal((await both(t, root, ['send', id, '  '])).code, 2);
  assert.equal((await both(t, root, ['send', id, '-'], { input: '\n' })).code, 2);
  const notHome = await both(t, root, ['--home', path.join(root, 'no-such-folder'), 'send', id, 'hi'], { home: false });
  assert.equal(notHome.code, 3);
  assert.match(notHome.stderr, /not an openboa home/);
  const newer = await both(t, root, ['send', id, 'to a newer log'], {
    before: (copy) => {
      const log = path.join(copy, 'sessions', id, 'events.jsonl');
      const [first, ...rest] = fs.readFileSync(log, 'utf8').split('\n');
      fs.writeFileSync(log, [JSON.stringify({ ...JSON.parse(first as string), format: 99 }), ...rest].join('\n'));
    },
  });
  assert.equal(newer.code, 1);
  assert.match(newer.stderr, /log format 99/);
});

test('a one-shot send says why the message waits as the full CLI does', async (t) => {
  const { root, ids } = await homeWithSessions(t);
  const [id, other] = ids;
  await cliInProcess(['pause', id, '--reason', 'lunch'], { home: root });
  await cliInProcess(['archive', other], { home: root });
  assert.match((await both(t, root, ['send', id, 'while paused'])).stderr, /is paused \(since <TIME>: lunch\)/);
  assert.match((await both(t, root, ['send', other, 'while archived'])).stderr, /is archived/);

  // session.json behind the log by lines that are not messages (here a pause written by hand): the fold decides.
  const behind = await both(t, root, ['send', other, 'after a hand-written line'], {
    before: (copy) => {
      fs.appendFileSync(path.join(copy, 'sessions', other, 'events.jsonl'), `${JSON.stringify({ type: 'session.updated', archived: false })}\n${JSON.stringify({ type: 'user.pause', reason: 'by hand' })}\n`);
    },
  });
  assert.match(behind.stderr, /is paused \(since <TIME>: by hand\)/);
  assert.doesNotMatch(behind.stderr, /archived/);
  // No session.json at all: the same.
  await both(t, root, ['send', id, 'with no session.json'], { before: (copy) => fs.rmSync(path.join(copy, 'sessions', id, 'session.json')) });

  // A daemon holds the home's lock (this test process, alive): no note of it.
  const quiet = await both(t, root, ['send', id, 'with a daemon'], {
    before: async (copy) => {
      const lock = await lockHome(new Home(copy), systemClock);
      t.after(() => lock.release());
    },
  });
  assert.doesNotMatch(quiet.stderr, /no daemon/);
  // A lock left by a daemon that died on this machine (its pid gone): the note again.
  const dead = await both(t, root, ['send', id, 'after the daemon died'], {
    before: (copy) => {
      const dir = path.join(copy, '.openboa');
      fs.mkdirSync(path.join(dir, 'daemon.lock'), { recursive: true });
      // A pid above Linux's largest (2^22): no such process.
      const owner = { pid: 2 ** 22 + 7, host: os.hostname(), purpose: 'daemon', wake_id: null, acquired_at: new Date().toISOString() };
      const machine = { boot_id: fs.readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim(), pid_ns: fs.readlinkSync('/proc/self/ns/pid') };
      fs.writeFileSync(path.join(dir, 'daemon.json'), JSON.stringify({ ...owner, ...machine }));
    },
  });
  assert.match(dead.stderr, /no daemon is running/);
});

test('a one-shot send to a session waiting on answers, or terminated, notes it as the full CLI does', async (t) => {
  const b = await bench(t, { agent: { tools: { write: { permission: 'always_ask' } } }, steps: [{ toolUses: [{ id: 'toolu_w', name: 'write', input: { file_path: 'a', content: 'a' } }] }] });
  const waiting = b.session('write it');
  await b.wake(waiting);
  assert.match((await both(t, b.h.root, ['send', waiting, 'also this'])).stderr, /is waiting on 1 answer/);
});

test('a one-shot send on a shared home drops the message into inbox/ as the full CLI does', async (t) => {
  const { root, ids } = await homeWithSessions(t);
  const [id, other] = ids;
  const flagged = await both(t, root, ['send', '--shared', id, 'through inbox/']);
  assert.match(flagged.written, new RegExp(`${id}/inbox/<drop>\\n\\{"id":"<EVENT>","type":"user.message","created_at":"<TIME>","content":\\[\\{"type":"text","text":"through inbox/"\\}\\]\\}\\n`));
  fs.writeFileSync(path.join(root, 'openboa.yaml'), 'shared: true\n');
  const configured = await both(t, root, ['send', other, 'shared by openboa.yaml']);
  assert.match(configured.written, /inbox\/<drop>\n.*shared by openboa\.yaml/);
});

test('which command lines are the one-shot send: only those the full parser reads the same way', () => {
  const env = {};
  assert.deepEqual(leanSendForm(['send', 'abc', 'hi', 'there'], env), { home: undefined, json: false, shared: false, id: 'abc', text: 'hi', rest: ['there'] });
  assert.deepEqual(leanSendForm(['--home', '/h', 'send', '--shared', 'abc', '-', '--json'], env), { home: '/h', json: true, shared: true, id: 'abc', text: '-', rest: [] });
  assert.equal(leanSendForm(['send', 'abc', 'hi'], { OPENBOA_FULL_CLI: '1' }), null);
  for (const argv of [
    ['send', 'abc'], // no text: the usage error is the full CLI's
    ['send', 'abc', 'hi', '--wait'],
    ['send', 'abc', '--lines'],
    ['send', 'abc', 'hi', '--help'],
    ['send', 'abc', '-h'],
    ['send', 'abc', '--', '--not-an-option'],
    ['send', 'abc', '-5'],
    ['--shared', 'send', 'abc', 'hi'], // --shared is send's option, not the program's
    ['--home', 'a', '--home', 'b', 'send', 'abc', 'hi'],
    ['--home', '--json', 'send', 'abc', 'hi'],
    ['send', 'abc', 'hi', '--home'],
    ['status', 'abc'],
    ['sendx', 'abc', 'hi'],
    ['--version'],
  ]) {
    assert.equal(leanSendForm(argv, env), null, argv.join(' '));
  }
});

/** The sources (from the source maps) of the bundled files a run of the built CLI loaded. */
function loadedSources(t: TestContext, args: string[], env: NodeJS.ProcessEnv = {}): string[] {
  const list = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'openboa-loads-')), 'loads.txt');
  t.after(() => fs.rmSync(path.dirname(list), { recursive: true, force: true }));
  const r = spawnSync(process.execPath, ['--import', path.join(REPO, 'tests', 'helpers', 'record-loads.mjs'), CLI, ...args], {
    env: { ...process.env, ...env, OPENBOA_TEST_LOADS: list },
    encoding: 'utf8',
  });
  assert.equal(r.status, 0, r.stderr);
  const files = fs
    .readFileSync(list, 'utf8')
    .split('\n')
    .filter((u) => u.startsWith('file:') && u.includes('/dist/cli/'))
    .map((u) => new URL(u).pathname);
  assert.ok(files.includes(CLI), 'the recording saw the entry point');
  return files.flatMap((f) => (JSON.parse(fs.readFileSync(`${f}.map`, 'utf8')) as { sources: string[] }).sources.map((s) => path.relative(REPO, path.resolve(path.dirname(f), s))));
}

test('a one-shot send loads no zod, no schema, no parser and no store; the full CLI does', async (t) => {
  const { root, ids } = await homeWithSessions(t);
  // (node_modules may be a link to another checkout's: a package is known by its folder wherever it is.)
  const heavy = (s: string) => s.includes('node_modules/zod/') || s.includes('node_modules/commander/') || (s.startsWith('src/core/schema/') && s !== 'src/core/schema/format-constants.ts') || s === 'src/core/store/session-store.ts';
  // Twice: the second finds session.json behind the log by the first's message, and still reads no fold.
  for (const text of ['one', 'two']) {
    const lean = loadedSources(t, ['--home', root, 'send', ids[0], text]);
    assert.ok(lean.includes('src/cli/send-lean.ts'), 'the lean path ran');
    assert.deepEqual(lean.filter(heavy), []);
  }
  const full = loadedSources(t, ['--home', root, 'send', ids[0], 'three'], { OPENBOA_FULL_CLI: '1' });
  assert.ok(full.some((s) => s.includes('node_modules/zod/')), 'the check sees zod where it is loaded');
  assert.ok(!full.includes('src/cli/send-lean.ts'));
});
