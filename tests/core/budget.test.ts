/**
 * Issue 30, budgets that alert: an agent's limits.daily_budget_usd, shared by
 * all of its sessions. Crossing 80 % writes a warning (once a day) and moves
 * a metric; crossing 100 % stops the next run before it asks the model,
 * saying why, until the next UTC day or a raised budget.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import YAML from 'yaml';
import { unitRun, UNIT_AGENT } from '../helpers/unit-run.js';
import { DaemonMetrics } from '../../src/daemon/metrics.js';
import { parseExposition } from '../helpers/prom-text.js';
import { ledgerPath, readLedger } from '../../src/core/run/spend-budget.js';

// $10 per million input tokens: a reply of 1,000 input tokens costs $0.01.
const agent = (budget: number) => ({ pricing: { 'unit-model': { input: 10, output: 0, cache_write: 0, cache_read: 0 } }, limits: { daily_budget_usd: budget } });
const CENT = { usage: { input_tokens: 1000, output_tokens: 0 } };

test('80 % warns once and counts a metric; 100 % stops the next run before it asks the model, says why, and resumes the next UTC day', async (t) => {
  const u = unitRun(t, { agents: { unit: agent(0.025) }, replies: [{ text: 'one', ...CENT }, { text: 'two', ...CENT }, { text: 'three', ...CENT }, { text: 'next day', ...CENT }] });
  const m = new DaemonMetrics({ store: u.store, clock: u.deps.clock });
  u.deps.telemetry = { tracer: null, captureContent: false, metrics: m };
  const a = u.newSession();
  const b = u.newSession();
  const say = async (id: string, text: string) => {
    u.store.appendUserEvent(id, { type: 'user.message', content: [{ type: 'text', text }] });
    return u.run(id);
  };
  const codes = (id: string) => u.events(id).flatMap((e) => (e.type === 'session.error' ? [e.error.code] : []));

  await say(a, 'first'); // $0.01: 40 %
  await say(b, 'second'); // $0.02 once it ends: 80 %, seen at the next check
  assert.deepEqual([...codes(a), ...codes(b)], []);
  const third = await say(a, 'third'); // warned before its request, then $0.03
  assert.equal(third.stop_reason?.type, 'end_turn');
  assert.deepEqual(codes(a), ['spend_budget_warning']);
  const warning = u.events(a).find((e) => e.type === 'session.error')!;
  assert.match(warning.type === 'session.error' ? warning.error.message : '', /agent unit has spent \$0\.02 of its daily budget of \$0\.03 \(limits\.daily_budget_usd\) on 2026-11-21 \(UTC\): 80 %/);
  assert.equal(parseExposition((await m.scrape()).body).value('openboa_budget_warnings_total', { agent: 'unit' }), 1);
  assert.equal(readLedger(ledgerPath(u.h.home, 'unit', '2026-11-21')).spent.toFixed(4), '0.0300');

  // Over budget: the next run, of either session, stops before asking the model.
  const asked = u.model!.requests.length;
  const stopped = await say(b, 'fourth');
  assert.equal(u.model!.requests.length, asked, 'no model request over budget');
  assert.equal(stopped.status, 'rescheduling');
  assert.equal(stopped.retry_at, '2026-11-22T00:00:00.000Z');
  assert.equal(stopped.failure?.code, 'spend_budget_exhausted');
  assert.match(stopped.failure!.message, /agent unit spent \$0\.03 of its daily budget of \$0\.03 \(limits\.daily_budget_usd\) on 2026-11-21 \(UTC\); its runs stop until 2026-11-22T00:00:00\.000Z, or until the budget is raised/);
  assert.deepEqual(codes(b), ['spend_budget_exhausted'], 'the warning is given once a day for the agent, not once per session');
  // The retry waits for the next day: a run now is skipped.
  assert.equal((await u.run(b)).skip_reason, 'rescheduled');

  // The next UTC day: the session goes on by itself, and the message is answered.
  await u.deps.clock.advance(Date.parse('2026-11-22T00:00:01Z') - u.deps.clock.now());
  const next = await u.run(b);
  assert.equal(next.outcome, 'executed');
  assert.equal(next.stop_reason?.type, 'end_turn');
  assert.equal(u.model!.requests.length, asked + 1);
});

test('a person who raises the budget runs the session at once with a manual wake', async (t) => {
  const u = unitRun(t, { agents: { unit: agent(0.01) }, replies: [{ text: 'one', ...CENT }, { text: 'after the raise', ...CENT }] });
  const id = u.newSession();
  u.store.appendUserEvent(id, { type: 'user.message', content: [{ type: 'text', text: 'first' }] });
  await u.run(id);
  u.store.appendUserEvent(id, { type: 'user.message', content: [{ type: 'text', text: 'second' }] });
  assert.equal((await u.run(id)).failure?.code, 'spend_budget_exhausted');
  u.h.write('agents/unit/agent.yaml', YAML.stringify({ ...UNIT_AGENT, ...agent(1) }));
  const r = await u.run(id, { trigger: 'manual' });
  assert.equal(r.stop_reason?.type, 'end_turn');
  assert.equal(u.model!.requests.length, 2);
});

test('an agent without a budget writes no ledger', async (t) => {
  const u = unitRun(t, { replies: [{ text: 'hi', ...CENT }] });
  const id = u.newSession();
  u.store.appendUserEvent(id, { type: 'user.message', content: [{ type: 'text', text: 'go' }] });
  await u.run(id);
  assert.deepEqual(readLedger(ledgerPath(u.h.home, 'unit', '2026-11-21')), { spent: 0, warned: false });
});
