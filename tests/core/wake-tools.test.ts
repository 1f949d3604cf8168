/**
 * The agent's revisit tools with a real store: schedule_wake's `every` and
 * `cron` (what it writes, what it refuses and how the refusal names the
 * field, its bounds), cancel_wake and list_wakes on recurring revisits.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { ToolCatalog } from '../../src/core/tools/catalog.js';
import type { ToolContext } from '../../src/core/tools/tool.js';
import { SessionStore } from '../../src/core/store/session-store.js';
import { createSession } from '../../src/core/ops/create-session.js';
import { MemorySandbox } from '../../src/core/sandbox/memory-sandbox.js';
import { Redactor } from '../../src/core/foundation/redact.js';
import { MAX_RECURRING_WAKES } from '../../src/core/tools/wake-tools.js';
import { tempHome } from '../helpers/home.js';
import { testDeps } from '../helpers/deps.js';

function setup(t: Parameters<typeof tempHome>[0]) {
  const h = tempHome(t);
  const deps = testDeps();
  const store = new SessionStore(h.home, deps);
  const id = createSession(store, { agent: 'demo' }).id;
  const catalog = new ToolCatalog({ tools: {}, custom_tools: [] }, { hasSkills: false });
  let n = 0;
  const call = (name: string, input: unknown) => {
    const ctx: ToolContext = { sessionId: id, wakeId: 'wrun_test', toolUseId: `sevt_tool_${++n}`, clock: deps.clock, store, sandbox: new MemorySandbox(), redactor: Redactor.none, skills: [], shellTimeoutMs: 1000, outputLimitChars: 30_000, signal: new AbortController().signal };
    return catalog.execute(name, input, ctx);
  };
  const lines = () => fs.readFileSync(store.paths(id).wakeQueue, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l));
  return { deps, store, id, call, lines };
}

test('schedule_wake with every: a recurring revisit one interval from now, written with its rule', async (t) => {
  const { store, id, call, lines } = setup(t);
  const out = await call('schedule_wake', { every: '1h30m', reason: 'look at the queue' });
  assert.equal(out.isError, false, out.text);
  assert.match(out.text, /^scheduled wake_\w+, every 1h30m; first revisit 2026-11-21T11:30:00.000Z\./);
  const [line] = lines();
  assert.deepEqual([line.every, line.due_at, line.source, line.wake_run_id], [5400, '2026-11-21T11:30:00.000Z', 'agent', 'wrun_test']);
  assert.deepEqual(store.snapshot(id).pending_wakes[0]!.recurrence, { every: 5400 });
  // delay_seconds with every sets the first revisit; seconds work as well as a duration.
  const soon = await call('schedule_wake', { every: 600, delay_seconds: 60, reason: 'soon, then every 10 minutes' });
  assert.match(soon.text, /every 10m; first revisit 2026-11-21T10:01:00.000Z/);
});

test('schedule_wake with cron: the next occurrence in the time zone, UTC by default', async (t) => {
  const { call, lines } = setup(t);
  const out = await call('schedule_wake', { cron: '0 9 * * 1-5', timezone: 'Europe/Berlin', reason: 'standup' });
  assert.equal(out.isError, false, out.text);
  assert.match(out.text, /cron 0 9 \* \* 1-5 \(Europe\/Berlin\); first revisit 2026-11-23T08:00:00.000Z/);
  await call('schedule_wake', { cron: '@daily', reason: 'daily' });
  const [, daily] = lines();
  assert.deepEqual([daily.cron, daily.timezone, daily.due_at], ['@daily', 'UTC', '2026-11-22T00:00:00.000Z']);
});

test('schedule_wake refuses bad recurring input with an error that names the field, and writes nothing', async (t) => {
  const { call, lines } = setup(t);
  const cases: Array<[unknown, RegExp]> = [
    [{ every: 30, reason: 'r' }, /^invalid input for schedule_wake: every: at least 60 seconds \(1m\) between firings, got 30/],
    [{ every: '10 sec', reason: 'r' }, /every: at least 60 seconds/],
    [{ every: 'soonish', reason: 'r' }, /every: "soonish" is not a duration/],
    [{ every: 1.5, reason: 'r' }, /every: expected whole seconds/],
    [{ cron: '* * * * * *', reason: 'r' }, /cron: "\* \* \* \* \* \*": expected 5 fields/],
    [{ cron: '0 0 30 2 *', reason: 'r' }, /cron: "0 0 30 2 \*" never fires/],
    [{ cron: '0 9 * * *', timezone: 'Moon/Base', reason: 'r' }, /timezone: "Moon\/Base" is not a time zone/],
    [{ every: '1h', timezone: 'UTC', reason: 'r' }, /timezone: a timezone belongs to a cron expression/],
    [{ every: '1h', cron: '0 9 * * *', reason: 'r' }, /cron: expected either every or cron, not both/],
    [{ every: '1h', delay_seconds: 60, at: '2026-11-21T12:00:00Z', reason: 'r' }, /delay_seconds: expected exactly one of delay_seconds or at, not both/],
    [{ reason: 'r' }, /delay_seconds: expected exactly one of delay_seconds or at \(or every or cron/],
  ];
  for (const [input, want] of cases) {
    const out = await call('schedule_wake', input);
    assert.equal(out.isError, true, JSON.stringify(input));
    assert.match(out.text, want, JSON.stringify(input));
  }
  assert.deepEqual(lines(), []);
});

test(`an agent keeps at most ${MAX_RECURRING_WAKES} recurring revisits; one-shot revisits are not held back by them`, async (t) => {
  const { call } = setup(t);
  for (let i = 0; i < MAX_RECURRING_WAKES; i++) assert.equal((await call('schedule_wake', { every: '1h', reason: `r${i}` })).isError, false);
  const over = await call('schedule_wake', { cron: '@hourly', reason: 'one more' });
  assert.equal(over.isError, true);
  assert.match(over.text, new RegExp(`already have ${MAX_RECURRING_WAKES} repeating revisits \\(the limit is ${MAX_RECURRING_WAKES}`));
  assert.equal((await call('schedule_wake', { delay_seconds: 60, reason: 'once' })).isError, false);
});

test('list_wakes shows a recurring revisit with its rule; cancel_wake stops it for good, but not the heartbeat', async (t) => {
  const { deps, store, id, call } = setup(t);
  await call('schedule_wake', { every: '2h', reason: 'poll the feed' });
  const w = store.snapshot(id).pending_wakes[0]!;
  assert.match((await call('list_wakes', {})).text, new RegExp(`^${w.id}  due 2026-11-21T12:00:00.000Z  every 2h  \\(agent\\)  poll the feed$`));
  const out = await call('cancel_wake', { wake_id: w.id });
  assert.equal(out.text, `cancelled ${w.id} and every revisit it would have made`);
  await deps.clock.advance(10 * 3_600_000);
  assert.deepEqual(store.snapshot(id).pending_wakes, []);
  const hb = store.scheduleWake(id, { due_at: '2026-11-21T21:00:00.000Z', reason: 'heartbeat', source: 'heartbeat', recurrence: { every: 1800 } });
  const refused = await call('cancel_wake', { wake_id: hb.id });
  assert.equal(refused.isError, true);
  assert.match(refused.text, /is your heartbeat, set in agent.yaml/);
  assert.equal(store.snapshot(id).pending_wakes.length, 1);
});
