/**
 * The delegation tools in-process (docs/delegation.md, "The tools"): a
 * queued model port answering parent and children in turn, the memory
 * sandbox, a manual clock and the real store, fold and loop on a temp home.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import YAML from 'yaml';
import { SessionStore } from '../../src/core/store/session-store.js';
import { createSession } from '../../src/core/ops/create-session.js';
import { loadAgent } from '../../src/core/definitions/definitions.js';
import { wake } from '../../src/core/run/wake.js';
import type { Runtime } from '../../src/core/run/run-context.js';
import { readLines } from '../../src/core/store/jsonl.js';
import { parseEventLine } from '../../src/core/store/parse-line.js';
import type { SessionEvent } from '../../src/core/schema/index.js';
import { tempHome } from '../helpers/home.js';
import { testDeps } from '../helpers/deps.js';
import { queuedModel, type Reply } from '../helpers/queued-model.js';
import { validateLog } from '../helpers/event-schema.js';
import { MemorySandbox } from '../../src/core/sandbox/memory-sandbox.js';

const agent = (extra: Record<string, unknown> = {}) => YAML.stringify({ provider: 'anthropic', model: 'unit-model', system: 'unit', environment: 'local', ...extra });

function setup(t: TestContext, replies: Reply[], boss: Record<string, unknown> = { delegates: ['worker'] }, worker: Record<string, unknown> = {}) {
  const h = tempHome(t);
  h.write('agents/boss/agent.yaml', agent(boss));
  h.write('agents/worker/agent.yaml', agent(worker));
  h.write('agents/loner/agent.yaml', agent());
  const model = queuedModel(replies);
  const sandbox = new MemorySandbox({ exec: () => '' });
  const deps = { ...testDeps({}), models: model.registry, sandbox: () => sandbox };
  const store = new SessionStore(h.home, deps);
  const rt: Runtime = { home: h.home, store, deps };
  const id = createSession(store, { agent: 'boss' }).id;
  const events = (sid = id): SessionEvent[] =>
    readLines(store.paths(sid).events)
      .lines.map((l) => parseEventLine(l, deps.clock.now()))
      .flatMap((r) => (r.kind === 'event' ? [r.event] : []));
  const results = (sid = id) => events(sid).flatMap((e) => (e.type === 'agent.tool_result' ? [{ text: (e.content[0] as { text: string }).text, isError: e.is_error === true }] : []));
  const children = () => store.listIds().filter((x) => x !== id && store.snapshot(x).parent_session_id !== null);
  const say = (sid: string, text = 'go on') => store.appendUserEvent(sid, { type: 'user.message', content: [{ type: 'text', text }] });
  say(id, 'start');
  return { h, model, store, rt, id, deps, events, results, children, say, run: (sid = id) => wake(rt, sid) };
}

/** The delegation tools (search_sessions and read_session are offered to every agent, not only to delegating ones). */
const delegationTool = (name: string) => /session|parent/.test(name) && name !== 'search_sessions' && name !== 'read_session';
const spawn = (input: Record<string, unknown>): Reply => ({ tools: [{ name: 'spawn_session', input }] });

test('spawn_session makes a child with its parent and depth, hands it the task, and records thread_created + thread_message_sent in the parent\'s log', async (t) => {
  // The worker's requests (10 input and 5 output tokens each) cost $0.001 per 1,000 tokens: $0.015 each.
  const s = setup(t, [spawn({ agent: 'worker', message: 'count the files', title: 'counting' }), { text: 'spawned' }], { delegates: ['worker'] }, { pricing: { 'unit-model': { input: 1000, output: 1000, cache_write: 0, cache_read: 0 } } });
  const r = await s.run();
  assert.equal(r.stop_reason?.type, 'end_turn');
  const [child] = s.children();
  assert.ok(child);
  const c = s.store.snapshot(child);
  assert.equal(c.parent_session_id, s.id);
  assert.equal(c.depth, 1);
  assert.equal(c.agent_id, 'worker');
  assert.equal(c.title, 'counting');
  const task = s.events(child).find((e) => e.type === 'user.message');
  assert.deepEqual(task && 'content' in task ? task.content : null, [{ type: 'text', text: 'count the files' }]);
  assert.match(s.results()[0]!.text, new RegExp(`spawned session ${child}`));
  const own = s.events().filter((e) => e.type.startsWith('session.thread') || e.type.startsWith('agent.thread'));
  assert.deepEqual(own.map((e) => e.type), ['session.thread_created', 'agent.thread_message_sent']);
  assert.ok(own.every((e) => e.wake_id === r.wake_id), 'written by the parent\'s run');
  assert.deepEqual(validateLog(s.store.paths(s.id).events).errors, []);
  const snap = s.store.snapshot(s.id);
  assert.equal(snap.children[child]?.agent, 'worker');
  assert.equal(snap.children[child]?.depth, 1);
  // A parent is offered the parent tools, not message_parent; the child the reverse.
  assert.deepEqual(s.model.requests[0]!.tools.map((x) => x.name).filter(delegationTool), ['spawn_session', 'send_to_session', 'list_sessions']);
  assert.match(s.model.requests[0]!.tools.find((x) => x.name === 'spawn_session')!.description, /The agents you may spawn: "worker"\./);
  await s.run(child);
  assert.deepEqual(s.model.requests[2]!.tools.map((x) => x.name).filter(delegationTool), ['message_parent']);
  // relations.json, rewritten as the parent's run ended, lists the child.
  const rel = JSON.parse(fs.readFileSync(`${s.store.paths(s.id).runtime}/relations.json`, 'utf8'));
  assert.deepEqual({ ...rel, children: rel.children.map((x: { session_id: string; agent: string }) => [x.session_id, x.agent]) }, { session_id: s.id, parent_session_id: null, depth: 0, children: [[child, 'worker']], tree_cost_usd: 0 });
  const childRel = JSON.parse(fs.readFileSync(`${s.store.paths(child).runtime}/relations.json`, 'utf8'));
  assert.equal(childRel.parent_session_id, s.id);
  assert.equal(childRel.depth, 1);
  // Before the child's first report: its own status, no cost yet. After the parent's run on the report: its status and its tree's cost.
  assert.deepEqual([rel.children[0].status, rel.children[0].cost_usd], ['idle', null]);
  await s.run();
  const after = JSON.parse(fs.readFileSync(`${s.store.paths(s.id).runtime}/relations.json`, 'utf8'));
  assert.deepEqual(after.children, [{ session_id: child, agent: 'worker', title: 'counting', status: 'idle', cost_usd: 0.015 }]);
  assert.equal(after.tree_cost_usd, 0.015);
});

test('the parent\'s secrets do not reach the child: the task is redacted and the child has its own environment', async (t) => {
  const s = setup(t, [spawn({ agent: 'worker', message: 'use key sk-parent-secret-123456' }), { text: 'ok' }]);
  s.h.write('environments/vault.yaml', YAML.stringify({ env: { API_KEY: { secret: { env: 'PARENT_KEY' } } } }));
  s.h.write('agents/boss/agent.yaml', agent({ delegates: ['worker'], environment: 'vault' }));
  const parent = createSession(s.store, { agent: 'boss', env_overrides: { EXTRA: 'x' } }).id;
  s.say(parent);
  s.deps.env.PARENT_KEY = 'sk-parent-secret-123456';
  await s.run(parent);
  const child = s.store.listIds().find((x) => s.store.snapshot(x).parent_session_id === parent)!;
  const c = s.store.snapshot(child);
  assert.equal(c.environment_id, 'local');
  assert.deepEqual(c.overrides, {});
  const log = fs.readFileSync(s.store.paths(child).events, 'utf8') + fs.readFileSync(s.store.paths(parent).events, 'utf8');
  assert.doesNotMatch(log, /sk-parent-secret-123456/);
});

test('refusals: an agent not in the roster, no roster at all, an unknown roster agent', async (t) => {
  const s = setup(t, [spawn({ agent: 'loner', message: 'x' }), { text: 'ok' }]);
  await s.run();
  assert.deepEqual(s.children(), []);
  assert.equal(s.results()[0]!.isError, true);
  assert.match(s.results()[0]!.text, /"loner" is not one of your delegates \(worker\)/);
  // An agent with no roster is offered none of the tools, and a call is denied as unknown.
  const lone = createSession(s.store, { agent: 'loner' }).id;
  s.say(lone);
  s.model.requests.length = 0;
  await wake(s.rt, lone);
  assert.ok(!s.model.requests[0]!.tools.some((x) => delegationTool(x.name)));
  s.h.write('agents/ghostly/agent.yaml', agent({ delegates: ['worker', 'ghost'] }));
  assert.throws(() => loadAgent(s.h.home, 'ghostly'), (e: Error & { code?: string }) => e.code === 'invalid_input' && /^agents\/ghostly\/agent\.yaml:\d+: delegates\.1: unknown agent "ghost"/.test(e.message));
  assert.throws(() => createSession(s.store, { agent: 'ghostly' }), /delegates\.1: unknown agent "ghost"/);
});

test('depth: a child of a child past limits.max_spawn_depth is refused', async (t) => {
  const s = setup(t, [spawn({ agent: 'self', message: 'go deeper' }), { text: 'ok' }, spawn({ agent: 'boss', message: 'deeper still' }), { text: 'ok' }], { delegates: 'self', limits: { max_spawn_depth: 1 } });
  await s.run();
  const [child] = s.children();
  assert.equal(s.store.snapshot(child!).depth, 1);
  await s.run(child);
  assert.deepEqual(s.children(), [child]);
  const res = s.results(child)[0]!;
  assert.equal(res.isError, true);
  assert.match(res.text, /depth 2, over the limit of 1 \(limits\.max_spawn_depth of this agent or an ancestor's\)/);
});

test('depth: an ancestor\'s limit binds its whole tree, whatever a descendant\'s own agent allows', async (t) => {
  // boss (limit 1) spawns worker; worker's own agent allows 10 and may spawn itself, but its line is bound by 1.
  const s = setup(t, [spawn({ agent: 'worker', message: 'go' }), { text: 'ok' }, spawn({ agent: 'worker', message: 'deeper' }), { text: 'ok' }], { delegates: ['worker'], limits: { max_spawn_depth: 1 } }, { delegates: 'self' });
  await s.run();
  const [child] = s.children();
  assert.equal(s.store.snapshot(child!).tree_max_depth, 1);
  await s.run(child);
  const res = s.results(child)[0]!;
  assert.equal(res.isError, true);
  assert.match(res.text, /depth 2, over the limit of 1/);
});

test('children per session are capped (limits.max_children)', async (t) => {
  const s = setup(t, [{ tools: [{ name: 'spawn_session', input: { agent: 'worker', message: 'a' } }, { name: 'spawn_session', input: { agent: 'worker', message: 'b' } }] }, { text: 'ok' }], { delegates: ['worker'], limits: { max_children: 1 } });
  await s.run();
  assert.equal(s.children().length, 1);
  const [a, b] = s.results();
  assert.equal(a!.isError, false);
  assert.equal(b!.isError, true);
  assert.match(b!.text, /already has 1 children, the limit is 1 \(limits\.max_children\)/);
});

test('the defaults with no limits in agent.yaml: no child deeper than 10, at most 25 children per session', async (t) => {
  const many = Array.from({ length: 26 }, (_, i) => ({ name: 'spawn_session', input: { agent: 'worker', message: `part ${i}` } }));
  const s = setup(t, [{ tools: many }, { text: 'ok' }, spawn({ agent: 'worker', message: 'one level too deep' }), { text: 'ok' }]);
  const def = loadAgent(s.h.home, 'boss');
  assert.deepEqual([def.def.limits.max_spawn_depth, def.def.limits.max_children], [10, 25]);
  await s.run();
  assert.equal(s.children().length, 25);
  const res = s.results();
  assert.equal(res.filter((r) => !r.isError).length, 25);
  assert.match(res[25]!.text, /already has 25 children, the limit is 25 \(limits\.max_children\)/);
  // A line of sessions 10 deep below a root: the one at depth 10 may not spawn.
  let at = createSession(s.store, { agent: 'boss' }).id;
  for (let d = 1; d <= 10; d++) at = createSession(s.store, { agent: 'boss', parentSessionId: at }).id;
  assert.equal(s.store.snapshot(at).depth, 10);
  s.say(at);
  await s.run(at);
  assert.match(s.results(at)[0]!.text, /the child would be at depth 11, over the limit of 10/);
});

test('send_to_session: refused for a session that is not a child; a follow-up reaches a finished child, which keeps its history', async (t) => {
  const s = setup(t, [spawn({ agent: 'worker', message: 'first task' }), { text: 'spawned' }]);
  await s.run();
  const [child] = s.children();
  const stranger = createSession(s.store, { agent: 'worker' }).id;
  await s.run(child); // the child answers "done" (the queue's fallback)
  assert.equal(s.store.snapshot(child!).status, 'idle');
  // The parent follows up (and tries a stranger).
  const replies: Reply[] = [{ tools: [{ name: 'send_to_session', input: { session_id: stranger, message: 'hi' } }, { name: 'send_to_session', input: { session_id: child, message: 'second task' } }] }, { text: 'sent' }];
  const model2 = queuedModel(replies);
  const rt2: Runtime = { ...s.rt, deps: { ...s.rt.deps, models: model2.registry } };
  s.say(s.id);
  await wake(rt2, s.id);
  const [refused, sent] = s.results().slice(-2);
  assert.equal(refused!.isError, true);
  assert.match(refused!.text, new RegExp(`${stranger} is not one of your child sessions \\(yours: ${child}\\)`));
  assert.equal(sent!.isError, false);
  assert.equal(s.events(stranger).filter((e) => e.type === 'user.message').length, 0);
  const sentEvents = s.events().filter((e) => e.type === 'agent.thread_message_sent');
  assert.equal(sentEvents.length, 2);
  assert.deepEqual(validateLog(s.store.paths(s.id).events).errors, []);
  // The child's next request carries its first task, its answer and the follow-up.
  const model3 = queuedModel([{ text: 'second done' }]);
  await wake({ ...s.rt, deps: { ...s.rt.deps, models: model3.registry } }, child!);
  const convo = JSON.stringify(model3.requests[0]!.messages);
  assert.match(convo, /first task[\s\S]*done[\s\S]*second task/);
});

test('message_parent appends to the parent\'s log, keyed by the tool use; a repeated delivery is taken once', async (t) => {
  const s = setup(t, [spawn({ agent: 'worker', message: 'task' }), { text: 'spawned' }, { tools: [{ name: 'message_parent', input: { message: 'halfway there' } }] }, { text: 'done' }]);
  await s.run();
  const [child] = s.children();
  await s.run(child);
  const res = s.results(child)[0]!;
  assert.equal(res.isError, false, res.text);
  const use = s.events(child).find((e) => e.type === 'agent.tool_use')!;
  // The message_parent's delivery (the child's report when its run ended is keyed run:…, and comes after).
  const got = s.events().filter((e): e is Extract<SessionEvent, { type: 'agent.thread_message_received' }> => e.type === 'agent.thread_message_received' && e.delivery_key.startsWith('msg:'));
  assert.equal(got.length, 1);
  assert.deepEqual(
    { from: got[0]!.from_session_thread_id, agent: got[0]!.from_agent_name, content: got[0]!.content, key: got[0]!.delivery_key, wake: got[0]!.wake_id ?? null },
    { from: child, agent: 'worker', content: [{ type: 'text', text: 'halfway there' }], key: `msg:${use.id}`, wake: null },
  );
  assert.deepEqual(validateLog(s.store.paths(s.id).events).errors, []);
  const pending = () => s.store.snapshot(s.id).pending_events.filter((p) => p.type === 'agent.thread_message_received').length;
  assert.equal(pending(), 2, 'the message and the report');
  // The same delivery again (a repeat after a crash) is dropped by the parent's fold.
  const { id: _id, created_at: _c, ...again } = got[0]! as SessionEvent & Record<string, unknown>;
  s.store.appendEvents(s.id, [again as never]);
  assert.equal(pending(), 2);
  // A message over the bound is refused as invalid input.
  const model2 = queuedModel([{ tools: [{ name: 'message_parent', input: { message: 'x'.repeat(20_000) } }] }, { text: 'ok' }]);
  s.store.appendUserEvent(child!, { type: 'user.message', content: [{ type: 'text', text: 'more' }] });
  await wake({ ...s.rt, deps: { ...s.rt.deps, models: model2.registry } }, child!);
  assert.match(s.results(child).at(-1)!.text, /invalid input for message_parent: message/);
  assert.equal(s.events().filter((e) => e.type === 'agent.thread_message_received' && e.delivery_key.startsWith('msg:')).length, 2);
});

test('list_sessions shows each child with its status, agent, title and last report', async (t) => {
  const s = setup(t, [spawn({ agent: 'worker', message: 'a', title: 'first' }), { text: 'spawned' }]);
  await s.run();
  const [child] = s.children();
  const model2 = queuedModel([{ tools: [{ name: 'list_sessions', input: {} }] }, { text: 'seen' }]);
  s.say(s.id);
  await wake({ ...s.rt, deps: { ...s.rt.deps, models: model2.registry } }, s.id);
  assert.equal(s.results().at(-1)!.text, `${child}  worker  idle  "first"  no report yet`);
  const model3 = queuedModel([{ tools: [{ name: 'list_sessions', input: {} }] }, { text: 'seen' }]);
  const lone = createSession(s.store, { agent: 'boss' }).id;
  s.say(lone);
  await wake({ ...s.rt, deps: { ...s.rt.deps, models: model3.registry } }, lone);
  assert.equal(s.results(lone)[0]!.text, 'no child sessions');
});
