/**
 * Issue 30, cost you can ask for: `openboa usage --by agent,model,day`,
 * over the home or a session's tree, with --since, --json and --csv; a model
 * with no price is named and its cost left unknown, never counted as $0.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { cliInProcess } from '../helpers/cli.js';
import { tempHome } from '../helpers/home.js';
import { testDeps } from '../helpers/deps.js';
import { FIRST_RUN } from '../helpers/run-ids.js';
import { SessionStore } from '../../src/core/store/session-store.js';
import { createSession } from '../../src/core/ops/create-session.js';
import { Home } from '../../src/core/foundation/home.js';
import type { NewEvent } from '../../src/core/schema/index.js';

const DAY = 86_400_000;

async function home(t: TestContext) {
  const h = tempHome(t);
  const deps = testDeps(); // the clock starts at 2026-11-21T10:00Z
  const store = new SessionStore(new Home(h.root), deps);
  let run = 0;
  /** One run of `id` with a request to each model given, at its cost (100 tokens in, 10 out each). */
  const spend = (id: string, requests: Array<[model: string, cost: number]>, more: NewEvent[] = []) => {
    const wake = `${FIRST_RUN.slice(0, -2)}${String(10 + run++)}`;
    store.appendEvents(id, [{ type: 'session.status_running', wake_id: wake, trigger: 'manual', processed_event_ids: [] }], { wakeId: wake });
    for (const [model, cost] of requests) {
      const [start] = store.appendEvents(id, [{ type: 'span.model_request_start', model }], { wakeId: wake });
      store.appendEvents(id, [{ type: 'span.model_request_end', model_request_start_id: start!.id, is_error: false, model_usage: { input_tokens: 100, output_tokens: 10, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 }, cost_usd: cost }], { wakeId: wake });
    }
    if (more.length) store.appendEvents(id, more, { wakeId: wake });
    store.appendEvents(id, [{ type: 'session.status_idle', wake_id: wake, stop_reason: { type: 'end_turn' }, stop_details: null }], { wakeId: wake });
  };
  const lead = createSession(store, { agent: 'claude' }).id;
  const child = createSession(store, { agent: 'demo', parentSessionId: lead }).id;
  const other = createSession(store, { agent: 'demo' }).id;
  spend(lead, [['claude-sonnet-4-5', 0.5], ['claude-sonnet-4-5', 0.25]], [{ type: 'session.thread_created', session_thread_id: child, agent_name: 'demo' }]);
  spend(other, [['mystery-model', 0]]);
  await deps.clock.advance(DAY); // the next day
  spend(lead, [['claude-sonnet-4-5', 0.125]]);
  spend(child, [['claude-sonnet-4-5', 0.0625]]);
  return { root: h.root, lead, child, other };
}

const run = async (args: string[], root: string) => {
  const r = await cliInProcess(args, { home: root });
  assert.equal(r.code, 0, r.stderr);
  return r;
};

test('usage --by agent,model,day --json: every request summed by agent, model and UTC day; an unpriced model is named, its cost unknown', async (t) => {
  const s = await home(t);
  const out = JSON.parse((await run(['usage', '--by', 'agent,model,day', '--json'], s.root)).stdout);
  assert.equal(out.scope, 'home');
  assert.deepEqual(
    out.rows.map((r: { day: string; agent_id: string; model: string; usage: { model_requests: number; cost_usd: number; input_tokens: number }; unpriced_requests: number }) => [r.day, r.agent_id, r.model, r.usage.model_requests, r.usage.input_tokens, r.usage.cost_usd, r.unpriced_requests]),
    [
      ['2026-11-21', 'claude', 'claude-sonnet-4-5', 2, 200, 0.75, 0],
      ['2026-11-21', 'demo', 'mystery-model', 1, 100, 0, 1],
      ['2026-11-22', 'claude', 'claude-sonnet-4-5', 1, 100, 0.125, 0],
      ['2026-11-22', 'demo', 'claude-sonnet-4-5', 1, 100, 0.0625, 0],
    ],
  );
  assert.deepEqual(out.unpriced, ['mystery-model']);
  assert.equal(out.total.usage.cost_usd, 0.9375);
  assert.equal(out.total.unpriced_requests, 1);

  const text = await run(['usage', '--by', 'model'], s.root);
  assert.match(text.stdout, /mystery-model .* unknown/);
  assert.doesNotMatch(text.stdout, /mystery-model .*\$0\.000000/);
  assert.match(text.stderr, /no price for mystery-model: the cost of its requests is unknown, not counted/);
});

test('usage <id> --by day covers the session and its descendants; --since leaves out what came before', async (t) => {
  const s = await home(t);
  const tree = JSON.parse((await run(['usage', s.lead, '--by', 'day', '--json'], s.root)).stdout);
  assert.equal(tree.scope, s.lead);
  assert.deepEqual(tree.rows.map((r: { day: string; usage: { cost_usd: number; model_requests: number } }) => [r.day, r.usage.model_requests, r.usage.cost_usd]), [
    ['2026-11-21', 2, 0.75],
    ['2026-11-22', 2, 0.1875],
  ]);
  const since = JSON.parse((await run(['usage', '--by', 'agent', '--since', '2026-11-22', '--json'], s.root)).stdout);
  assert.deepEqual(since.rows.map((r: { agent_id: string; usage: { cost_usd: number } }) => [r.agent_id, r.usage.cost_usd]), [['claude', 0.125], ['demo', 0.0625]]);
  assert.equal(since.since, '2026-11-22T00:00:00.000Z');
});

test('usage --csv: a header and one row per agent, model and day; bad --by and --since say what is expected', async (t) => {
  const s = await home(t);
  const csv = (await run(['usage', '--csv'], s.root)).stdout.trim().split('\n');
  assert.equal(csv[0], 'agent,model,day,requests,input_tokens,output_tokens,cache_write_tokens,cache_read_tokens,cost_usd,unpriced_requests');
  assert.deepEqual(csv.slice(1), [
    'claude,claude-sonnet-4-5,2026-11-21,2,200,20,0,0,0.75,0',
    'demo,mystery-model,2026-11-21,1,100,10,0,0,0,1',
    'claude,claude-sonnet-4-5,2026-11-22,1,100,10,0,0,0.125,0',
    'demo,claude-sonnet-4-5,2026-11-22,1,100,10,0,0,0.0625,0',
  ]);
  const bad = await cliInProcess(['usage', '--by', 'agent,week'], { home: s.root });
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--by "agent,week": expected a comma-separated list of agent, model, day/);
  const badSince = await cliInProcess(['usage', '--since', 'yesterday'], { home: s.root });
  assert.equal(badSince.code, 2);
  assert.match(badSince.stderr, /--since "yesterday": expected a date/);
});
