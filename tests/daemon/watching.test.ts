/** The watcher's fallbacks: polling on request, and polling when inotify runs out. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { EventEmitter } from 'node:events';
import { bench } from '../helpers/run.js';
import { startDaemon } from '../helpers/daemon.js';
import { beforeHomeRemoved } from '../helpers/home.js';
import os from 'node:os';
import path from 'node:path';
import { setImmediate as nextImmediate } from 'node:timers/promises';
import { SessionWatcher } from '../../src/daemon/session-watcher.js';
import { FolderWatches } from '../../src/daemon/folder-watches.js';
import { until } from '../helpers/until.js';

/** Native fs.watch handles open in this process (a closed one leaves the list once its close has run). */
async function fsWatchHandles(): Promise<number> {
  await new Promise((r) => setTimeout(r, 50));
  const handles = (process as unknown as { _getActiveHandles(): object[] })._getActiveHandles();
  return handles.filter((h) => h.constructor.name === 'FSWatcher').length;
}

test('--poll: appends are noticed by polling', async (t) => {
  const b = await bench(t, { steps: [{ text: 'polled' }] });
  const id = b.session();
  const td = await startDaemon(t, b, { poll: true, pollIntervalMs: 100 });
  assert.equal(td.d.watchMode, 'polling');
  await new Promise<void>((resolve) => {
    const check = () => (td.lines.some((l) => JSON.parse(l).event === 'watcher_ready') ? resolve() : setTimeout(check, 20));
    check();
  });
  fs.appendFileSync(b.store.paths(id).events, '{"type":"user.message","content":"hello"}\n');
  // The polling rounds run on the daemon's clock: a later one sees the append. (Not necessarily the one 100 ms
  // on: a round that cost more CPU spaces the next further, poll-watches.ts.)
  const ran = () => td.d.results.some((x) => x.session_id === id && x.outcome === 'executed');
  await b.deps.clock.advanceUntil(ran, 100, 60_000);
  const r = await td.result((x) => x.session_id === id && x.outcome === 'executed');
  assert.deepEqual(r.stop_reason, { type: 'end_turn' });
});

test('running out of inotify watches (ENOSPC) falls back to polling with a warning, not a crash', async (t) => {
  const b = await bench(t);
  const id = b.session();
  const hints: string[] = [];
  const warnings: string[] = [];
  let ready = 0;
  const w = new SessionWatcher({ sessionsDir: b.h.home.sessionsDir, clock: b.deps.clock, poll: false, pollIntervalMs: 100, onHint: (x) => hints.push(x), onGone: () => undefined, onWarn: (m) => warnings.push(m), onReady: () => ready++ });
  beforeHomeRemoved(t, () => w.close());
  w.start();
  const inner = (w as unknown as { watcher: EventEmitter }).watcher as FolderWatches;
  assert.ok(inner.watches > 0);
  inner.emit('error', Object.assign(new Error('ENOSPC: System limit for number of file watchers reached'), { code: 'ENOSPC' }));
  assert.equal(w.mode, 'polling');
  // The native watches are given back before polling starts, and the abandoned watcher's 'ready' is not reported.
  assert.equal(inner.watches, 0);
  assert.match(warnings[0] ?? '', /ran out of inotify watches \(ENOSPC\); falling back to polling/);
  await new Promise<void>((resolve) => {
    const check = () => (ready > 0 ? resolve() : setTimeout(check, 20));
    check();
  });
  fs.appendFileSync(b.store.paths(id).events, '{"type":"user.message","content":"still seen"}\n');
  // A later polling round sees it (a round that cost more CPU spaces the next further than 100 ms).
  await b.deps.clock.advanceUntil(() => hints.includes(id), 100, 60_000);
  assert.ok(hints.includes(id));
});

test('half-made session folders left by a crash are removed at start, recent ones left alone', async (t) => {
  const b = await bench(t);
  const old = `${b.h.home.sessionsDir}/.creating-old`;
  const fresh = `${b.h.home.sessionsDir}/.creating-fresh`;
  fs.mkdirSync(`${old}/workspace`, { recursive: true });
  fs.mkdirSync(fresh);
  // ages are measured on the daemon's clock (the manual one here)
  const past = new Date(b.deps.clock.now() - 3_600_000);
  const now = new Date(b.deps.clock.now());
  fs.utimesSync(old, past, past);
  fs.utimesSync(fresh, now, now);
  await startDaemon(t, b);
  assert.equal(fs.existsSync(old), false);
  assert.equal(fs.existsSync(fresh), true);
});

test('FolderWatches.start() watches only sessions/ at once; each slice of session folders waits for nextTurn', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'openboa-fw-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  // More folders than one slice (512), so two slices are needed.
  const id = (i: number) => `019a8f6e-0000-7000-8000-${String(i).padStart(12, '0')}`;
  for (let i = 0; i < 700; i++) fs.mkdirSync(path.join(dir, id(i), 'inbox'), { recursive: true });
  const before = await fsWatchHandles();
  let asked = 0;
  let go: () => void = () => undefined;
  const nextTurn = () => {
    asked += 1;
    return new Promise<void>((resolve) => (go = resolve));
  };
  const w = new FolderWatches({ sessionsDir: dir, onHint: () => undefined, onGone: () => undefined, nextTurn });
  t.after(() => w.close());
  let ready = 0;
  w.on('ready', () => ready++);
  w.start();
  // The daemon's scan runs meanwhile: start() itself costs one watch, not 1,400.
  assert.equal(w.watches, 1);
  await turns(10);
  assert.equal(w.watches, 1, 'nothing more while nextTurn has not resolved');
  assert.equal(asked, 1);
  go();
  await until(() => asked === 2);
  assert.equal(w.watches, 1 + 512 * 2, 'one slice');
  await turns(10);
  assert.equal(w.watches, 1 + 512 * 2, 'the next slice waits for its turn');
  // close() between two slices: the rest are not added, no ready, no watch left open.
  await w.close();
  go();
  await turns(10);
  assert.equal(w.watches, 0);
  // A folder made after close() is not watched either.
  fs.mkdirSync(path.join(dir, id(900), 'inbox'), { recursive: true });
  await new Promise((r) => setTimeout(r, 100));
  assert.equal(w.watches, 0);
  assert.equal(ready, 0);
  assert.equal(await fsWatchHandles(), before);
});

test('FolderWatches: ready comes after start() returns, and every watch it made is closed by close()', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'openboa-fw-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.mkdirSync(path.join(dir, '019a8f6e-0000-7000-8000-000000000001', 'inbox'), { recursive: true });
  const before = await fsWatchHandles();
  const w = new FolderWatches({ sessionsDir: dir, onHint: () => undefined, onGone: () => undefined });
  let ready = 0;
  w.on('ready', () => ready++);
  w.start();
  assert.equal(ready, 0);
  await new Promise<void>((resolve) => w.once('ready', () => resolve()));
  assert.equal(w.watches, 3);
  assert.equal(await fsWatchHandles(), before + 3);
  await w.close();
  assert.equal(await fsWatchHandles(), before);
});

test('FolderWatches: a session as created costs one watch; an inbox/ made later is watched before the hint that follows it', async (t) => {
  const b = await bench(t);
  const ids = [b.session(), b.session(), b.session()];
  // Each hint with the number of watches held when it was given.
  const hints: Array<[string, number]> = [];
  const w: FolderWatches = new FolderWatches({ sessionsDir: b.h.home.sessionsDir, onHint: (id) => hints.push([id, w.watches]), onGone: () => undefined });
  beforeHomeRemoved(t, () => w.close());
  // Every fs.watch tried, failed ones too (each costs heap that V8 keeps: an inbox/ is looked for, not tried).
  const tried: string[] = [];
  const watch = fs.watch;
  t.mock.method(fs, 'watch', (...args: Parameters<typeof fs.watch>) => {
    tried.push(String(args[0]));
    return watch(...args);
  });
  w.start();
  await new Promise<void>((resolve) => w.once('ready', () => resolve()));
  assert.equal(w.watches, 1 + ids.length, 'sessions/ and one watch per session: no inbox/ until its first use');
  assert.equal(tried.length, 1 + ids.length, tried.join(', '));
  // A writer's first drop: inbox/ made and a file renamed in at once, before the daemon sees the new
  // folder, so no watch sees the rename; the hint must come after the new inbox/ is watched.
  const inbox = b.store.paths(ids[1]!).inbox;
  const dropIn = (name: string) => {
    fs.mkdirSync(inbox, { recursive: true });
    fs.writeFileSync(path.join(inbox, `.tmp-${name}`), '{"type":"user.message","content":"x"}\n');
    fs.renameSync(path.join(inbox, `.tmp-${name}`), path.join(inbox, name));
  };
  dropIn('1.json');
  await until(() => hints.length > 0);
  assert.deepEqual(hints[0], [ids[1], 2 + ids.length]);
  // The next drop is reported by that watch.
  hints.length = 0;
  dropIn('2.json');
  await until(() => hints.length > 0);
  assert.deepEqual(new Set(hints.map(([id]) => id)), new Set([ids[1]]));
  assert.equal(w.watches, 2 + ids.length);
  // An emptied inbox/ removed (docs/format.md: how an operator gives those watches back) is no longer watched.
  fs.rmSync(inbox, { recursive: true });
  await until(() => w.watches === 1 + ids.length);
});

async function turns(n: number): Promise<void> {
  for (let i = 0; i < n; i++) await nextImmediate();
}
