import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { SessionStore } from '../../src/core/store/session-store.js';
import { createSession } from '../../src/core/ops/create-session.js';
import { UUID_V7 } from '../../src/core/schema/index.js';
import { openActions } from '../../src/core/store/fold.js';
import { tempHome } from '../helpers/home.js';
import { testDeps } from '../helpers/deps.js';
import { FIRST_RUN } from '../helpers/run-ids.js';

function setup(t: Parameters<typeof tempHome>[0]) {
  const h = tempHome(t);
  const deps = testDeps();
  const store = new SessionStore(h.home, deps);
  return { h, deps, store };
}

const lines = (f: string) => fs.readFileSync(f, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));

test('create: a UUIDv7 directory with session.created first, an empty wake queue, workspace/ and runtime/, and no inbox/', (t) => {
  const { store } = setup(t);
  const s = createSession(store, { agent: 'demo', title: 'hello' });
  assert.match(s.id, UUID_V7);
  const p = store.paths(s.id);
  const log = lines(p.events);
  assert.equal(log.length, 1);
  assert.equal(log[0].type, 'session.created');
  assert.equal(log[0].agent_id, 'demo');
  assert.equal(log[0].environment_id, 'local');
  assert.equal(log[0].title, 'hello');
  assert.match(log[0].id, /^sevt_[0-9a-f]{32}$/);
  assert.equal(fs.readFileSync(p.wakeQueue, 'utf8'), '');
  assert.ok(fs.statSync(p.workspace).isDirectory());
  assert.ok(fs.statSync(p.runtime).isDirectory());
  // The whole layout: inbox/ is made on first use (each one costs the daemon a watch).
  assert.deepEqual(fs.readdirSync(p.dir).sort(), ['events.jsonl', 'run-key', 'runtime', 'session.json', 'wake-queue.jsonl', 'workspace']);
  const snap = JSON.parse(fs.readFileSync(p.snapshot, 'utf8'));
  assert.equal(snap.status, 'idle');
  assert.equal(snap.agent_id, 'demo');
  assert.deepEqual(snap.journals.events.line, 1);
  // nothing half-made is left behind
  assert.deepEqual(fs.readdirSync(path.dirname(p.dir)).filter((n) => n.startsWith('.')), []);
});

test('list returns sessions oldest first', async (t) => {
  const { store, deps } = setup(t);
  const a = createSession(store, { agent: 'demo' });
  await deps.clock.advance(5);
  const b = createSession(store, { agent: 'demo' });
  assert.deepEqual(store.listIds(), [a.id, b.id]);
});

test('the snapshot follows appends: pending events, processed cursor, status, usage', (t) => {
  const { store, deps } = setup(t);
  const s = createSession(store, { agent: 'demo' });
  const p = store.paths(s.id);
  fs.appendFileSync(p.events, '{"type":"user.message","content":"one"}\n{"type":"user.message","content":"two"}\n');
  let snap = store.snapshot(s.id);
  assert.deepEqual(snap.pending_events.map((e) => e.id), ['sevt_line_2', 'sevt_line_3']);
  assert.equal(snap.processed_through_line, 1);
  store.appendEvents(s.id, [{ type: 'session.status_running', wake_id: FIRST_RUN, trigger: 'event', processed_event_ids: ['sevt_line_2'] }], { wakeId: FIRST_RUN });
  snap = store.snapshot(s.id);
  assert.equal(snap.status, 'running');
  assert.equal(snap.running_wake_id, FIRST_RUN);
  assert.deepEqual(snap.pending_events.map((e) => e.id), ['sevt_line_3']);
  assert.equal(snap.processed_through_line, 2);
  const start = store.appendEvents(s.id, [{ type: 'span.model_request_start' }], { wakeId: FIRST_RUN })[0]!;
  store.appendEvents(
    s.id,
    [
      { type: 'span.model_request_end', model_request_start_id: start.id, is_error: false, model_usage: { input_tokens: 10, output_tokens: 5, cache_creation_input_tokens: 1, cache_read_input_tokens: 2 } },
      { type: 'session.status_idle', wake_id: FIRST_RUN, stop_reason: { type: 'end_turn' }, stop_details: null },
    ],
    { wakeId: FIRST_RUN },
  );
  snap = store.snapshot(s.id);
  assert.equal(snap.status, 'idle');
  assert.deepEqual(snap.stop_reason, { type: 'end_turn' });
  assert.deepEqual(snap.usage, { input_tokens: 10, output_tokens: 5, cache_creation_input_tokens: 1, cache_read_input_tokens: 2, model_requests: 1, cost_usd: 0 });
  void deps;
});

test('session.json is rebuilt when missing, unreadable or replaced by an older copy, and always equals a fold from scratch', (t) => {
  const { store } = setup(t);
  const s = createSession(store, { agent: 'demo' });
  const p = store.paths(s.id);
  fs.appendFileSync(p.events, '{"type":"user.message","content":"a"}\nnot json\n');
  const older = fs.readFileSync(p.snapshot, 'utf8');
  const incremental = store.snapshot(s.id);
  fs.rmSync(p.snapshot);
  const rebuilt = store.snapshot(s.id);
  assert.deepEqual(strip(rebuilt), strip(incremental));
  assert.ok(fs.existsSync(p.snapshot), 'the rebuilt snapshot is written back');
  fs.writeFileSync(p.snapshot, '{"format": 1, "id": "garbage"');
  assert.deepEqual(strip(store.snapshot(s.id)), strip(incremental));
  fs.writeFileSync(p.snapshot, older);
  assert.deepEqual(strip(store.snapshot(s.id)), strip(incremental));
  assert.equal(incremental.rejected.length, 1);
  assert.equal(incremental.rejected[0]?.line, 3);
});

/** updated_at of hand-written lines is the read time, so it may differ between folds. */
function strip(s: ReturnType<SessionStore['snapshot']>) {
  const { updated_at: _u, ...rest } = s;
  return rest;
}

test('bad lines are remembered until a session.error reports them', (t) => {
  const { store } = setup(t);
  const s = createSession(store, { agent: 'demo' });
  const p = store.paths(s.id);
  fs.appendFileSync(p.events, '{"type":"nope"}\n');
  fs.appendFileSync(p.wakeQueue, '{"reason":"no time"}\n');
  let snap = store.snapshot(s.id);
  assert.deepEqual(snap.rejected.map((r) => `${r.file}:${r.line}`), ['events.jsonl:2', 'wake-queue.jsonl:1']);
  store.appendEvents(s.id, [
    { type: 'session.error', error: { type: 'unknown_error', code: 'invalid_event', message: 'bad', retry_status: { type: 'terminal' } }, line: 2 },
    { type: 'session.error', error: { type: 'unknown_error', code: 'invalid_wake', message: 'bad', retry_status: { type: 'terminal' } }, line: 1, file: 'wake-queue.jsonl' },
  ], { wakeId: FIRST_RUN });
  snap = store.snapshot(s.id);
  assert.deepEqual(snap.rejected, []);
  fs.rmSync(p.snapshot);
  assert.deepEqual(store.snapshot(s.id).rejected, [], 'a rebuild knows they were reported');
});

test('a confirmation for an unknown, un-asked or already-answered tool use is rejected by the fold', (t) => {
  const { store } = setup(t);
  const s = createSession(store, { agent: 'demo' });
  store.appendEvents(s.id, [{ type: 'session.status_running', wake_id: FIRST_RUN, trigger: 'event', processed_event_ids: [] }], { wakeId: FIRST_RUN });
  const [use] = store.appendEvents(s.id, [{ type: 'agent.tool_use', name: 'write', input: {}, model_tool_use_id: 'toolu_1', evaluated_permission: 'ask' }], { wakeId: FIRST_RUN });
  const [allowed] = store.appendEvents(s.id, [{ type: 'agent.tool_use', name: 'read', input: {}, model_tool_use_id: 'toolu_2', evaluated_permission: 'allow' }], { wakeId: FIRST_RUN });
  let snap = store.snapshot(s.id);
  assert.deepEqual(openActions(snap).map((u) => u.id), [use!.id]);
  const p = store.paths(s.id);
  fs.appendFileSync(
    p.events,
    [
      JSON.stringify({ type: 'user.tool_confirmation', tool_use_id: 'sevt_nope', result: 'allow' }),
      JSON.stringify({ type: 'user.tool_confirmation', tool_use_id: allowed!.id, result: 'allow' }),
      JSON.stringify({ type: 'user.tool_confirmation', tool_use_id: use!.id, result: 'deny', deny_message: 'no' }),
      JSON.stringify({ type: 'user.tool_confirmation', tool_use_id: use!.id, result: 'allow' }),
    ].join('\n') + '\n',
  );
  snap = store.snapshot(s.id);
  assert.deepEqual(snap.pending_events.map((e) => e.line), [7]);
  assert.deepEqual(snap.rejected.map((r) => r.line), [5, 6, 8]);
  assert.match(snap.rejected[0]!.message, /line 5: user\.tool_confirmation: tool_use_id sevt_nope is not a tool use awaiting an answer/);
  assert.match(snap.rejected[1]!.message, /did not ask for confirmation/);
  assert.match(snap.rejected[2]!.message, /already answered by sevt_line_7/);
  assert.deepEqual(openActions(snap), []);
});

test('wakes: scheduled, consumed, cancelled; a hand-written delay is pinned by the runtime', async (t) => {
  const { store, deps } = setup(t);
  const s = createSession(store, { agent: 'demo' });
  const p = store.paths(s.id);
  const w1 = store.scheduleWake(s.id, { due_at: '2026-11-21T10:05:00.000Z', reason: 'one', source: 'cli' });
  const w2 = store.scheduleWake(s.id, { due_at: '2026-11-21T10:06:00.000Z', reason: 'two', source: 'agent' });
  fs.appendFileSync(p.wakeQueue, '{"delay_seconds":60,"reason":"by hand"}\n');
  let snap = store.snapshot(s.id);
  const onDisk = JSON.parse(fs.readFileSync(p.snapshot, 'utf8'));
  assert.equal(onDisk.next_wake_at, '2026-11-21T10:01:00.000Z', 'session.json says when the next revisit is due');
  assert.equal(onDisk.counts.pending_wakes, 3);
  const hand = snap.pending_wakes.find((w) => w.id === 'wake_line_3')!;
  assert.equal(hand.provisional, true);
  assert.equal(hand.due_at, '2026-11-21T10:01:00.000Z');
  // read again later without pinning: a fresh fold would move it, the cached snapshot keeps it
  await deps.clock.advance(30_000);
  fs.rmSync(p.snapshot);
  assert.equal(store.snapshot(s.id).pending_wakes.find((w) => w.id === 'wake_line_3')!.due_at, '2026-11-21T10:01:30.000Z');
  snap = store.snapshot(s.id, { pin: true });
  assert.equal(snap.pending_wakes.find((w) => w.id === 'wake_line_3')!.provisional, false);
  await deps.clock.advance(30_000);
  fs.rmSync(p.snapshot);
  assert.equal(store.snapshot(s.id).pending_wakes.find((w) => w.id === 'wake_line_3')!.due_at, '2026-11-21T10:01:30.000Z', 'pinned: stable across rebuilds');
  store.settleWakes(s.id, 'wake.consumed', [w1.id], { wakeRunId: 'wrun_9' });
  store.settleWakes(s.id, 'wake.cancelled', [w2.id], { reason: 'user.interrupt' });
  snap = store.snapshot(s.id);
  assert.deepEqual(snap.pending_wakes.map((w) => w.id), ['wake_line_3']);
  assert.equal(snap.wakes_consumed, 1);
  assert.equal(snap.wakes_cancelled, 1);
});

test('a session folder without session.json is rebuilt, not an error', (t) => {
  const { store } = setup(t);
  const s = createSession(store, { agent: 'demo' });
  fs.rmSync(store.paths(s.id).snapshot);
  assert.equal(store.snapshot(s.id).agent_id, 'demo');
});

test('appendEvents validates what the runtime writes and redacts secrets', async (t) => {
  const { store } = setup(t);
  const s = createSession(store, { agent: 'demo' });
  const { Redactor } = await import('../../src/core/foundation/redact.js');
  const r = new Redactor({ TOKEN: 's3cr3t-value' });
  store.appendEvents(s.id, [{ type: 'agent.message', content: [{ type: 'text', text: 'the token is s3cr3t-value' }] }], { redactor: r });
  const text = fs.readFileSync(store.paths(s.id).events, 'utf8');
  assert.ok(!text.includes('s3cr3t-value'));
  assert.ok(text.includes('[REDACTED:TOKEN]'));
  // @ts-expect-error a wrong payload is refused before anything is written
  assert.throws(() => store.appendEvents(s.id, [{ type: 'agent.message', content: 'not blocks' }]), /refusing to write an invalid agent\.message/);
  assert.equal(lines(store.paths(s.id).events).length, 2);
});

test('snapshotAsync folds a big log in slices, yielding between them, to exactly what snapshot() folds', async (t) => {
  const { store, deps } = setup(t);
  const s = createSession(store, { agent: 'demo' });
  const p = store.paths(s.id);
  // 3 MB of hand-written messages (three slices and more), then a run that takes a revisit in.
  const text = 'x'.repeat(1000);
  fs.appendFileSync(p.events, Array.from({ length: 3000 }, (_, i) => `{"type":"user.message","content":"${i} ${text}"}\n`).join(''));
  const w = store.scheduleWake(s.id, { due_at: new Date(deps.clock.now() - 1000).toISOString(), reason: 'check', source: 'agent' });
  const pending = store.snapshot(s.id).pending_events.map((e) => e.id);
  store.appendEvents(s.id, [{ type: 'session.status_running', wake_id: FIRST_RUN, trigger: 'event', processed_event_ids: pending, wakes: [{ id: w.id, reason: 'check', due_at: w.due_at }] }], { wakeId: FIRST_RUN });
  store.settleWakes(s.id, 'wake.consumed', [w.id], { wakeRunId: FIRST_RUN });
  fs.appendFileSync(p.events, '{"type":"user.message","content":"after the run"}\n');

  fs.rmSync(p.snapshot);
  const whole = store.snapshot(s.id, { persist: false });
  fs.rmSync(p.snapshot, { force: true });
  let turns = 0;
  let counting = true;
  const tick = () => {
    turns += 1;
    if (counting) setImmediate(tick);
  };
  setImmediate(tick);
  const sliced = await new SessionStore(store['home'], deps).snapshotAsync(s.id);
  counting = false;
  assert.ok(turns >= 3, `the event loop turned ${turns} times during the fold`);
  assert.deepEqual(sliced, whole);
  assert.equal(sliced.pending_events.length, 1, 'only the message after the run is pending');
  assert.deepEqual(sliced.pending_wakes, []);
  assert.deepEqual(sliced.wakes_taken, []);
  assert.equal(sliced.wakes_consumed, 1);
  assert.ok(fs.existsSync(p.snapshot), 'session.json is written once the fold is whole');
});
