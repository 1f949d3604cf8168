/** The watcher's fallbacks: polling on request, and polling when inotify runs out. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { EventEmitter } from 'node:events';
import { bench } from '../helpers/run.js';
import { startDaemon } from '../helpers/daemon.js';
import { SessionWatcher } from '../../src/daemon/session-watcher.js';

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
  t.after(() => w.close());
  w.start();
  const inner = (w as unknown as { watcher: EventEmitter }).watcher;
  inner.emit('error', Object.assign(new Error('ENOSPC: System limit for number of file watchers reached'), { code: 'ENOSPC' }));
  assert.equal(w.mode, 'polling');
  assert.match(warnings[0] ?? '', /ran out of inotify watches \(ENOSPC\); falling back to polling/);
  await new Promise<void>((resolve) => {
    const check = () => (ready > 0 ? resolve() : setTimeout(check, 20));
    check();
  });
  fs.appendFileSync(b.store.paths(id).events, '{"type":"user.message","content":"still seen"}\n');
  await new Promise<void>((resolve) => {
    const check = () => (hints.includes(id) ? resolve() : setTimeout(check, 20));
    check();
  });
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
