/**
 * `openboa usage` (docs/delegation.md, "Usage and cost"): one session, a
 * session tree, the whole home by agent. The sessions' logs are written
 * here the way runs and child reports write them: a run's request ends with
 * their costs, and each child's report (session.thread_status_idle) with its
 * tree's usage, in its parent's log.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cliInProcess } from '../helpers/cli.js';
import { tempHome } from '../helpers/home.js';
import { testDeps } from '../helpers/deps.js';
import { FIRST_RUN } from '../helpers/run-ids.js';
import { SessionStore } from '../../src/core/store/session-store.js';
import { createSession } from '../../src/core/ops/create-session.js';
import { Home } from '../../src/core/foundation/home.js';
import type { ModelUsage } from '../../src/core/schema/index.js';

const U = (input: number, output: number): ModelUsage => ({ input_tokens: input, output_tokens: output, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 });

/** One run of `id` that made a request per cost given (usage 100 in, 10 out each). */
function spend(store: SessionStore, id: string, costs: number[]) {
  store.appendEvents(
    id,
    [
      { type: 'session.status_running', wake_id: FIRST_RUN, trigger: 'manual', processed_event_ids: [] },
      ...costs.flatMap((c) => [
        { type: 'span.model_request_start' as const, model: 'claude-sonnet-4-5' },
        { type: 'span.model_request_end' as const, model_request_start_id: 'sevt_x', is_error: false, model_usage: U(100, 10), cost_usd: c },
      ]),
      { type: 'session.status_idle', wake_id: FIRST_RUN, stop_reason: { type: 'end_turn' }, stop_details: null },
    ],
    { wakeId: FIRST_RUN },
  );
}

/** The child's report in its parent's log, carrying the child's tree usage as its snapshot has it now. */
function report(store: SessionStore, parent: string, child: string) {
  const c = store.snapshot(child);
  store.appendUserEvent(parent, { type: 'session.thread_status_idle', session_thread_id: child, agent_name: c.agent_id, stop_reason: { type: 'end_turn' }, delivery_key: `run:${FIRST_RUN}`, tree_usage: c.tree_usage });
}

function tree(t: Parameters<typeof tempHome>[0]) {
  const h = tempHome(t);
  const store = new SessionStore(new Home(h.root), testDeps());
  const parent = createSession(store, { agent: 'claude', title: 'lead' }).id;
  const child = createSession(store, { agent: 'demo', parentSessionId: parent }).id;
  const grandchild = createSession(store, { agent: 'demo', parentSessionId: child }).id;
  const stranger = createSession(store, { agent: 'demo' }).id;
  spend(store, parent, [0.5, 0.25]);
  spend(store, child, [0.125]);
  spend(store, grandchild, [0.0625, 0.03125]);
  spend(store, stranger, [2]);
  report(store, child, grandchild);
  report(store, parent, child);
  return { root: h.root, store, parent, child, grandchild, stranger };
}

const json = async (args: string[], root: string) => {
  const r = await cliInProcess([...args, '--json'], { home: root });
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout);
};

test('usage <id>: the session\'s own usage and cost, and its tree\'s as its children reported it', async (t) => {
  const s = tree(t);
  const one = await json(['usage', s.child], s.root);
  assert.equal(one.session_id, s.child);
  assert.equal(one.agent_id, 'demo');
  assert.deepEqual(one.usage, { input_tokens: 100, output_tokens: 10, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, model_requests: 1, cost_usd: 0.125 });
  assert.deepEqual(one.tree_usage, { input_tokens: 300, output_tokens: 30, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, model_requests: 3, cost_usd: 0.21875 });
  const text = await cliInProcess(['usage', s.child], { home: s.root });
  assert.equal(text.code, 0, text.stderr);
  assert.match(text.stdout, /own .*\$0\.125000/);
  assert.match(text.stdout, /with descendants .*\$0\.218750/);
});

test('usage <id> --tree --json: {usage, tree_usage, children} nested; a session that only claims to be a child is not counted in', async (t) => {
  const s = tree(t);
  // A report naming a session that is not this one's child (its session.created names no parent).
  s.store.appendUserEvent(s.parent, { type: 'session.thread_status_idle', session_thread_id: s.stranger, agent_name: 'demo', stop_reason: { type: 'end_turn' }, delivery_key: `run:${FIRST_RUN}` });
  const r = await json(['usage', s.parent, '--tree'], s.root);
  assert.equal(r.session_id, s.parent);
  assert.equal(r.usage.cost_usd, 0.75);
  assert.equal(r.tree_usage.cost_usd, 0.96875);
  assert.equal(r.tree_usage.model_requests, 5);
  assert.deepEqual(r.children.map((c: { session_id: string }) => c.session_id), [s.child, s.stranger]);
  const [child, stranger] = r.children;
  assert.equal(child.usage.cost_usd, 0.125);
  assert.equal(child.tree_usage.cost_usd, 0.21875);
  assert.deepEqual(child.children.map((c: { session_id: string; usage: { cost_usd: number }; children: unknown[] }) => [c.session_id, c.usage.cost_usd, c.children]), [[s.grandchild, 0.09375, []]]);
  assert.match(stranger.error, /names no parent as its parent/);
  assert.equal(stranger.usage, undefined, "the stranger's cost is not shown as part of the tree");
  // The tree's cost is the sum of every request end in it.
  assert.equal(r.tree_usage.cost_usd, 0.5 + 0.25 + 0.125 + 0.0625 + 0.03125);
  const text = await cliInProcess(['usage', s.parent, '--tree'], { home: s.root });
  assert.equal(text.code, 0, text.stderr);
  assert.match(text.stdout, new RegExp(`^${s.parent} .*\\$0\\.750000 +\\$0\\.968750$`, 'm'));
  assert.match(text.stdout, new RegExp(`^    ${s.grandchild} `, 'm'), 'a grandchild is indented twice');
});

test('usage with no id: every session of the home summed by agent, the dearest first', async (t) => {
  const s = tree(t);
  const r = await json(['usage'], s.root);
  assert.deepEqual(r.agents.map((a: { agent_id: string; sessions: number; usage: { cost_usd: number; model_requests: number } }) => [a.agent_id, a.sessions, a.usage.cost_usd, a.usage.model_requests]), [
    ['demo', 3, 2.21875, 4],
    ['claude', 1, 0.75, 2],
  ]);
  assert.equal(r.total.sessions, 4);
  assert.equal(r.total.usage.cost_usd, 2.96875, 'own usage summed: children are not counted twice');
  assert.deepEqual(r.unreadable, []);
  const text = await cliInProcess(['usage'], { home: s.root });
  assert.equal(text.code, 0, text.stderr);
  assert.match(text.stdout, /^total +4 +6 .*\$2\.968750$/m);
  // session.json is read when it is current; lines appended since are not missed.
  const nextRun = `wrun_${'0'.repeat(31)}2`;
  s.store.appendEvents(s.stranger, [
    { type: 'session.status_running', wake_id: nextRun, trigger: 'manual', processed_event_ids: [] },
    { type: 'span.model_request_end', model_request_start_id: 'sevt_y', is_error: false, model_usage: U(1, 1), cost_usd: 1 },
  ], { wakeId: nextRun });
  const after = await json(['usage'], s.root);
  assert.equal(after.total.usage.cost_usd, 3.96875);
  assert.equal(after.total.usage.model_requests, 7);
});

test('usage --tree without an id is a usage error; an unknown id is not found', async (t) => {
  const { root } = tempHome(t);
  const r = await cliInProcess(['usage', '--tree'], { home: root });
  assert.equal(r.code, 2);
  assert.match(r.stderr, /--tree needs a session id/);
  const none = await cliInProcess(['usage'], { home: root });
  assert.equal(none.code, 0);
  assert.match(none.stdout, /no sessions in /);
  const missing = await cliInProcess(['usage', '01234567-89ab-7def-8123-456789abcdef'], { home: root });
  assert.equal(missing.code, 3, missing.stderr);
});
