/**
 * The fsync policy (durability.ts), in-process: a queued model, the memory
 * sandbox, the real store on a temp home, and a sync function that records
 * which file it synced (by inode) instead of mocking fs. Then the shape a
 * power loss leaves: session.json's cursors past the end of a shortened log.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import YAML from 'yaml';
import { SessionStore } from '../../src/core/store/session-store.js';
import type { FsyncPolicy } from '../../src/core/store/durability.js';
import { scheduleRevisit, sendMessage } from '../../src/core/ops/session-ops.js';
import { createSession } from '../../src/core/ops/create-session.js';
import { wake } from '../../src/core/run/wake.js';
import { MemorySandbox } from '../../src/core/sandbox/memory-sandbox.js';
import { tempHome } from '../helpers/home.js';
import { testDeps } from '../helpers/deps.js';
import { queuedModel, type Reply } from '../helpers/queued-model.js';
import { FIRST_RUN } from '../helpers/run-ids.js';

const TOOL_RUN: Reply[] = [{ tools: [{ name: 'bash', input: { command: 'ls' } }] }, { text: 'done' }];

function setup(t: TestContext, fsync: FsyncPolicy | undefined, replies: Reply[] = TOOL_RUN) {
  const h = tempHome(t);
  h.write('agents/unit/agent.yaml', YAML.stringify({ provider: 'anthropic', model: 'unit-model', system: 'You are a unit test.', environment: 'local', tools: { bash: { permission: 'always_allow' } } }));
  const model = queuedModel([...replies]);
  const sandbox = new MemorySandbox({ exec: (cmd) => `ran: ${cmd}` });
  const deps = { ...testDeps({}), models: model.registry, sandbox: () => sandbox };
  /** Inodes synced, in order. */
  const synced: number[] = [];
  const store = new SessionStore(h.home, deps, { ...(fsync ? { fsync } : {}), syncFd: (fd) => synced.push(fs.fstatSync(fd).ino) });
  const id = createSession(store, { agent: 'unit' }).id;
  const p = store.paths(id);
  const ino = (f: string) => fs.statSync(f).ino;
  /** What was synced since the last call: 'events' | 'wakes' | 'dir'. */
  const take = () => synced.splice(0).map((i) => (i === ino(p.events) ? 'events' : i === ino(p.wakeQueue) ? 'wakes' : 'dir'));
  return { h, store, deps, id, p, take, run: () => wake({ home: h.home, store, deps }, id) };
}

const logLines = (f: string) => fs.readFileSync(f, 'utf8').split('\n').filter(Boolean).length;

test('always: every append of a run is synced, one sync per write', async (t) => {
  const s = setup(t, 'always');
  s.take();
  sendMessage(s.store, s.id, 'go');
  assert.deepEqual(s.take(), ['events']);
  const r = await s.run();
  assert.equal(r.outcome, 'executed');
  // status_running, request span, reply, tool result, request span, reply, idle: each its own write.
  const syncs = s.take();
  assert.ok(syncs.length >= 6, `expected a sync per write, got ${syncs.length}`);
  assert.ok(syncs.every((f) => f === 'events'));
});

test('run: a run that only answers is synced once, at its closing record', async (t) => {
  const s = setup(t, 'run', [{ text: 'hello' }]);
  sendMessage(s.store, s.id, 'hi');
  s.take();
  assert.equal((await s.run()).outcome, 'executed');
  assert.deepEqual(s.take(), ['events']);
});

test('run (the default): a run is synced before its tools run and at its closing record; a person\'s message at once', async (t) => {
  const s = setup(t, undefined);
  assert.equal(s.store.durability.policy, 'run');
  s.take();
  sendMessage(s.store, s.id, 'go');
  assert.deepEqual(s.take(), ['events'], "a person's event is a commit point");
  const before = logLines(s.p.events);
  const r = await s.run();
  assert.equal(r.outcome, 'executed');
  assert.ok(logLines(s.p.events) - before >= 6, `the run wrote its lines (${logLines(s.p.events) - before})`);
  assert.deepEqual(s.take(), ['events', 'events'], 'the reply asking for the tool (before it runs), then the closing record');
  assert.equal(s.store.durability.pending([s.p.events, s.p.wakeQueue]), false);
});

test('run: a revisit run syncs the log before the wake.consumed that depends on it, then the wake queue, then its commit points', async (t) => {
  const s = setup(t, 'run');
  scheduleRevisit(s.store, s.deps.clock, s.id, { inMs: 0 }, 'check');
  assert.deepEqual(s.take().slice(-1), ['wakes'], 'a wake-queue record is a commit point');
  const r = await s.run();
  assert.equal(r.outcome, 'executed');
  assert.deepEqual(r.wakes_consumed.length, 1);
  // status_running must not be lost while the wake.consumed that points at it survives.
  assert.deepEqual(s.take(), ['events', 'wakes', 'events', 'events']);
});

test('never: nothing the store appends is synced', async (t) => {
  const s = setup(t, 'never');
  s.take();
  sendMessage(s.store, s.id, 'go');
  scheduleRevisit(s.store, s.deps.clock, s.id, { inMs: 0 }, 'check');
  await s.run();
  createSession(s.store, { agent: 'unit' });
  assert.deepEqual(s.take(), []);
});

test('an unknown policy is refused up front', (t) => {
  const h = tempHome(t);
  assert.throws(() => new SessionStore(h.home, testDeps(), { fsync: 'sometimes' as FsyncPolicy }), /expected one of always, run, never, got "sometimes"/);
});

test('run: session.json does not count lines that are not yet synced', (t) => {
  const s = setup(t, 'run');
  const cached = () => JSON.parse(fs.readFileSync(s.p.snapshot, 'utf8')).journals.events.line as number;
  assert.equal(cached(), 1);
  s.take();
  s.store.appendEvents(s.id, [{ type: 'session.status_running', wake_id: FIRST_RUN, trigger: 'manual', processed_event_ids: [] }], { wakeId: FIRST_RUN });
  assert.deepEqual(s.take(), [], "a run's opening line is not a commit point");
  assert.equal(s.store.snapshot(s.id).status, 'running');
  assert.equal(cached(), 1, 'session.json is not rewritten while the line could still be lost');
  s.store.appendEvents(s.id, [{ type: 'session.status_idle', wake_id: FIRST_RUN, stop_reason: { type: 'end_turn' }, stop_details: null }], { wakeId: FIRST_RUN });
  assert.deepEqual(s.take(), ['events']);
  assert.equal(s.store.snapshot(s.id).status, 'idle');
  assert.equal(cached(), 3);
});

/** What a power loss can leave: session.json (renamed into place) counting lines the log no longer has. */
function cutLog(file: string, keepLines: number): void {
  const text = fs.readFileSync(file, 'utf8').split('\n').filter(Boolean);
  fs.writeFileSync(file, text.slice(0, keepLines).map((l) => `${l}\n`).join(''));
}

test('a cursor past the end of a shortened log rebuilds the snapshot instead of wedging', (t) => {
  const s = setup(t, 'never');
  for (const m of ['one', 'two', 'three']) sendMessage(s.store, s.id, m);
  assert.equal(s.store.snapshot(s.id).pending_events.length, 3);
  const cachedLine = JSON.parse(fs.readFileSync(s.p.snapshot, 'utf8')).journals.events.line;
  assert.equal(cachedLine, 4);
  cutLog(s.p.events, 2); // the power cut took "two" and "three"
  const fresh = new SessionStore(s.h.home, s.deps);
  const snap = fresh.snapshot(s.id);
  assert.equal(snap.journals.events.line, 2);
  assert.deepEqual(snap.pending_events.length, 1);
  // And the log goes on: a new message after the cut is seen, not skipped.
  sendMessage(fresh, s.id, 'again');
  assert.deepEqual(fresh.snapshot(s.id).pending_events.length, 2);
  assert.equal(JSON.parse(fs.readFileSync(s.p.snapshot, 'utf8')).journals.events.line, 3);
});

test('a shortened log written again past the old cursor, mid-line, also rebuilds', (t) => {
  const s = setup(t, 'never');
  for (const m of ['one', 'two']) sendMessage(s.store, s.id, m);
  s.store.snapshot(s.id);
  cutLog(s.p.events, 1);
  // One long line now covers the old cursor's offset, which no longer ends a line.
  sendMessage(s.store, s.id, 'x'.repeat(2000));
  const snap = new SessionStore(s.h.home, s.deps).snapshot(s.id);
  assert.equal(snap.journals.events.line, 2);
  assert.deepEqual(snap.pending_events.length, 1);
});

test('a wake queue shortened under its cursor rebuilds too', (t) => {
  const s = setup(t, 'never');
  scheduleRevisit(s.store, s.deps.clock, s.id, { inMs: 60_000 }, 'first');
  scheduleRevisit(s.store, s.deps.clock, s.id, { inMs: 120_000 }, 'second');
  assert.equal(s.store.snapshot(s.id).pending_wakes.length, 2);
  cutLog(s.p.wakeQueue, 1);
  const snap = new SessionStore(s.h.home, s.deps).snapshot(s.id);
  assert.deepEqual(snap.pending_wakes.map((w) => w.reason), ['first']);
});

test("the CLI's --fsync help names exactly the store's policies and default", async () => {
  const { FSYNC_POLICIES, DEFAULT_FSYNC } = await import('../../src/core/store/durability.js');
  const { COMMANDS } = await import('../../src/cli/command-catalog.js');
  const daemon = COMMANDS.find((c) => c.path.join(' ') === 'daemon');
  const opt = daemon?.options?.fsync;
  assert.equal(opt?.value, FSYNC_POLICIES.join('|'));
  assert.match(opt?.description ?? '', new RegExp(`\\(default ${DEFAULT_FSYNC}\\)$`));
});
