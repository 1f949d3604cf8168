/**
 * A spawn bomb: an agent with `delegates: self` whose every run spawns
 * four children of itself. In-process: a model port that answers each task
 * with four spawn_session calls (helpers/bomb-model.ts), the memory
 * sandbox, the manual clock and the real store, loop and cascade; a small
 * driver runs whatever is runnable, oldest session first, one at a time.
 * tests/daemon/spawn-bomb-daemon.test.ts runs it through the daemon.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { planRun } from '../../src/core/run/plan.js';
import { wake } from '../../src/core/run/wake.js';
import type { ModelRequest } from '../../src/core/model/provider.js';
import { unitRun } from '../helpers/unit-run.js';
import { cliInProcess } from '../helpers/cli.js';
import { bombModel, FAN_OUT } from '../helpers/bomb-model.js';

function bomb(t: TestContext, limits: Record<string, unknown> = {}, onRequest?: (req: ModelRequest) => void) {
  const m = bombModel({ onRequest });
  const u = unitRun(t, { agents: { bomb: { delegates: 'self', limits } }, model: m.model });
  const root = u.newSession('bomb');
  u.store.appendUserEvent(root, { type: 'user.message', content: [{ type: 'text', text: 'split this in four' }] });
  /** Runs whatever has work, oldest first, until nothing does, `until` holds, or `maxRuns` runs. */
  const drive = async (o: { until?: () => boolean; maxRuns?: number } = {}) => {
    let runs = 0;
    for (;;) {
      let ran = false;
      for (const id of u.store.listIds()) {
        if (o.until?.() || runs >= (o.maxRuns ?? 500)) return runs;
        if (!planRun(u.store.snapshot(id), u.deps.clock.now(), {}).runnable) continue;
        u.deps.clock.advance(10);
        await wake(u.rt, id);
        runs += 1;
        ran = true;
      }
      if (!ran) return runs;
    }
  };
  const results = (id: string) => u.events(id).flatMap((e) => (e.type === 'agent.tool_result' ? [{ text: e.content.map((b) => b.text).join(''), isError: e.is_error }] : []));
  return { ...u, root, drive, requests: m.requests, results };
}

test('an interrupt of the root stops a spawn bomb: no session is created after it, and every session goes idle without asking its model again', async (t) => {
  const b = bomb(t, { max_tree_sessions: 1000, max_spawns_per_minute: 1000 });
  // Grow: the root, its 4 children, and some of their 16 children (their tasks queued, not yet run).
  await b.drive({ until: () => b.store.listIds().length >= 13 });
  const before = b.store.listIds().length;
  assert.ok(before >= 13 && before < 30, `grown to ${before}`);
  b.deps.clock.advance(10);
  b.store.appendUserEvent(b.root, { type: 'user.interrupt', reason: 'stop the tree' });
  const asked = b.requests.length;
  await b.drive({ until: () => b.store.listIds().length > before + 100 });
  assert.equal(b.store.listIds().length, before, 'no session was created after the interrupt');
  assert.equal(b.requests.length, asked, 'no model was asked anything after the interrupt');
  for (const id of b.store.listIds()) {
    const s = b.store.snapshot(id);
    assert.equal(s.status, 'idle', `${id} is idle`);
    assert.ok(planRun(s, b.deps.clock.now(), {}).runnable === false, `${id} has nothing to run`);
  }
  // A child whose task was queued when the interrupt came was born interrupted: its log says why.
  const queued = b.store.listIds().filter((id) => b.events(id).filter((e) => e.type === 'span.model_request_start').length === 0 && id !== b.root);
  assert.ok(queued.length > 0);
  const why = b.events(queued[0]!).find((e) => e.type === 'user.interrupt');
  assert.match(why?.type === 'user.interrupt' ? String(why.reason) : '', new RegExp(`session ${b.root} .*was interrupted`));
});

test('an ancestor interrupted while a descendant\'s run is under way: that run\'s spawns are refused, each saying why, and nothing is created', async (t) => {
  let interruptRoot: (() => void) | null = null;
  const b = bomb(t, { max_tree_sessions: 1000, max_spawns_per_minute: 1000 }, () => {
    // The root is interrupted while the model answers a child's task: the child's run does not know yet.
    interruptRoot?.();
    interruptRoot = null;
  });
  await b.drive({ maxRuns: 1 }); // the root spawns its four
  const [child] = b.store.listIds().filter((id) => id !== b.root);
  interruptRoot = () => {
    b.deps.clock.advance(10);
    b.store.appendUserEvent(b.root, { type: 'user.interrupt', reason: 'stop the tree' });
  };
  const before = b.store.listIds().length;
  await wake(b.rt, child!);
  assert.equal(b.store.listIds().length, before);
  const results = b.results(child!);
  assert.equal(results.length, FAN_OUT);
  for (const r of results) {
    assert.equal(r.isError, true);
    assert.match(r.text, new RegExp(`^not spawned: the session ${b.root} above this one was interrupted at \\S+, after this run began`));
  }
  const refused = b.events(child!).filter((e) => e.type === 'session.spawn_refused');
  assert.deepEqual(refused.map((e) => (e.type === 'session.spawn_refused' ? e.reason : null)), Array(FAN_OUT).fill('interrupted'));
  assert.equal(b.store.snapshot(child!).spawn_refusals.count, FAN_OUT);
  const status = await cliInProcess(['status', child!], { home: b.h.root });
  assert.match(status.stdout, new RegExp(`spawns {5}${FAN_OUT} refused here; the last at \\S+: not spawned: the session ${b.root} above this one was interrupted`));
});

test('an interrupt that lands while the child is being made: the child, with no task and named nowhere, is taken out again', async (t) => {
  const b = bomb(t, { max_tree_sessions: 1000, max_spawns_per_minute: 1000 });
  const create = b.store.create.bind(b.store);
  let made: string | null = null;
  b.store.create = (input) => {
    const s = create(input);
    made ??= s.id;
    b.deps.clock.advance(1);
    b.store.appendUserEvent(b.root, { type: 'user.interrupt', reason: 'stop' });
    return s;
  };
  b.deps.clock.advance(10);
  await wake(b.rt, b.root);
  assert.ok(made);
  assert.deepEqual(b.store.listIds(), [b.root], 'no child is left');
  assert.deepEqual(fs.readdirSync(b.h.home.sessionsDir).filter((n) => n !== b.root), []);
  const [first] = b.results(b.root);
  assert.match(first!.text, /^not spawned: this session was interrupted at \S+, after this run began/);
  assert.equal(b.store.snapshot(b.root).children[made] ?? null, null);
});

test('the default limits stop the bomb within a few dozen sessions: 30 spawns a minute, 50 sessions a tree; each refusal is the model\'s error result and in `openboa status`', async (t) => {
  const b = bomb(t);
  await b.drive();
  // Every run took 10 ms of the clock: the whole bomb fell inside one minute.
  assert.equal(b.store.listIds().length, 1 + 30);
  const rate = b.store.listIds().flatMap((id) => b.results(id)).filter((r) => r.isError);
  assert.ok(rate.length > 0);
  assert.match(rate[0]!.text, new RegExp(`^not spawned: 30 sessions were spawned in the session tree of ${b.root} in the last minute, the limit is 30 \\(limits\\.max_spawns_per_minute of this agent or an ancestor's\\)`));
  // A minute later, the root is asked again: its tree grows to 50 sessions and no further.
  b.deps.clock.advance(61_000);
  b.store.appendUserEvent(b.root, { type: 'user.message', content: [{ type: 'text', text: 'again' }] });
  await b.drive();
  assert.equal(b.store.listIds().length, 50);
  const refusedIn = b.store.listIds().filter((id) => id !== b.root && b.store.snapshot(id).spawn_refusals.last?.reason === 'max_tree_sessions');
  assert.ok(refusedIn.length > 0);
  // The tree's latest refusal, and a session refused earlier than that.
  const lastAt = (id: string) => Date.parse(b.store.snapshot(id).spawn_refusals.last?.at ?? '1970-01-01T00:00:00Z');
  const latest = b.store.listIds().reduce((x, id) => (lastAt(id) > lastAt(x) ? id : x));
  const by = refusedIn.find((id) => id !== latest)!;
  const text = b.store.snapshot(by).spawn_refusals.last!.message;
  assert.equal(text, `not spawned: the session tree of ${b.root} has 50 sessions, the limit is 50 (limits.max_tree_sessions of this agent or an ancestor's); do the work yourself or with the children you have`);
  assert.ok(b.results(by).some((r) => r.isError && r.text === text), 'the model read it');
  for (const id of b.store.listIds()) assert.equal(b.store.snapshot(id).status, 'idle');

  const root = await cliInProcess(['status', b.root], { home: b.h.root });
  assert.equal(root.code, 0, root.stderr);
  // The root's status shows the tree and the refusals in it; the session that was refused, its own.
  const refusedInTree = b.store.listIds().reduce((n, id) => n + b.store.snapshot(id).spawn_refusals.count, 0);
  assert.match(root.stdout, new RegExp(`tree {7}this session is its root; 50 session\\(s\\), \\d+ spawned in the last minute; ${refusedInTree} spawn\\(s\\) refused in it`));
  assert.match(root.stdout, new RegExp(`spawns {5}\\d+ refused here; the last at \\S+: not spawned: the session tree of ${b.root} has 50 sessions`));
  const own = await cliInProcess(['status', by], { home: b.h.root });
  assert.match(own.stdout, new RegExp(`tree {7}root ${b.root}; 50 session\\(s\\)`));
  assert.match(own.stdout, new RegExp(`\\n {11}the last refused by ${latest} at \\S+: not spawned: `));
  assert.match(own.stdout, /spawns {5}\d+ refused here; the last at \S+: not spawned: the session tree of \S+ has 50 sessions, the limit is 50 \(limits\.max_tree_sessions/);
  const json = JSON.parse((await cliInProcess(['status', b.root, '--json'], { home: b.h.root })).stdout);
  assert.equal(json.tree.sessions, 50);
  assert.ok(json.tree.spawns_refused > 0);
});

test('a tree limit binds the tree below the agent that set it, whatever a descendant\'s own agent allows', async (t) => {
  const m = bombModel({ agent: 'bomb' });
  const u = unitRun(t, { agents: { lead: { delegates: ['bomb'], limits: { max_tree_sessions: 3 } }, bomb: { delegates: 'self' } }, model: m.model });
  const lead = u.newSession('lead');
  u.store.appendUserEvent(lead, { type: 'user.message', content: [{ type: 'text', text: 'go' }] });
  await wake(u.rt, lead); // 4 spawns of bomb: two fit (3 sessions), two are refused
  const kids = u.store.listIds().filter((id) => id !== lead);
  assert.equal(kids.length, 2);
  assert.equal(u.store.snapshot(kids[0]!).tree_max_sessions, 3);
  u.deps.clock.advance(10);
  await wake(u.rt, kids[0]!); // bomb's own default is 50; its line says 3
  assert.equal(u.store.listIds().length, 3);
  const res = u.events(kids[0]!).flatMap((e) => (e.type === 'agent.tool_result' ? [e.content[0]!.text] : []));
  assert.match(res[0]!, /has 3 sessions, the limit is 3 \(limits\.max_tree_sessions of this agent or an ancestor's\)/);
});

test('after an interrupt, new work re-opens the tree: a message to the root spawns children that work; the old ones stay idle', async (t) => {
  const b = bomb(t, { max_tree_sessions: 1000, max_spawns_per_minute: 1000 });
  await b.drive({ maxRuns: 1 });
  const old = b.store.listIds().filter((id) => id !== b.root);
  b.deps.clock.advance(10);
  b.store.appendUserEvent(b.root, { type: 'user.interrupt', reason: 'stop' });
  await b.drive();
  assert.equal(b.store.listIds().length, 1 + FAN_OUT);
  // A person asks again (after the interrupt): the root's new run spawns four children, which do their work.
  b.deps.clock.advance(10);
  b.store.appendUserEvent(b.root, { type: 'user.message', content: [{ type: 'text', text: 'go on' }] });
  await b.drive({ until: () => b.store.listIds().length >= 1 + 2 * FAN_OUT });
  const fresh = b.store.listIds().filter((id) => id !== b.root && !old.includes(id));
  assert.equal(fresh.length, FAN_OUT);
  await b.drive({ until: () => b.store.listIds().length > 1 + 2 * FAN_OUT });
  assert.ok(b.events(fresh[0]!).some((e) => e.type === 'span.model_request_start'), 'a new child asks its model');
  for (const id of old) assert.ok(!b.events(id).some((e) => e.type === 'span.model_request_start'), `${id} (born before the interrupt) never worked`);
});

test('an interrupt taken in with a message still goes on, and so do the children that run spawns', async (t) => {
  const b = bomb(t, { max_tree_sessions: 1000, max_spawns_per_minute: 1000 });
  b.store.appendUserEvent(b.root, { type: 'user.interrupt', reason: 'change of plan' });
  b.deps.clock.advance(10);
  await wake(b.rt, b.root); // takes in the first message, the interrupt, and goes on
  const kids = b.store.listIds().filter((id) => id !== b.root);
  assert.equal(kids.length, FAN_OUT);
  b.deps.clock.advance(10);
  await wake(b.rt, kids[0]!);
  assert.equal(b.store.listIds().length, 1 + 2 * FAN_OUT, 'the child was not born interrupted');
});

test('limits.max_tree_sessions is at most what an interrupt\'s cascade reads', (t) => {
  const u = unitRun(t, { agents: { big: { limits: { max_tree_sessions: 2001 } } } });
  assert.throws(() => u.newSession('big'), /limits\.max_tree_sessions: expected at most 2000 \(an interrupt's cascade reads at most that many sessions\)/);
});

test('an interrupt dated in the future (a hand-written line, a clock set back) does not stop the tree\'s work until then', async (t) => {
  const b = bomb(t, { max_tree_sessions: 1000, max_spawns_per_minute: 1000 });
  await b.drive({ maxRuns: 1 }); // the root spawns its four, their tasks queued
  const children = b.store.listIds().filter((id) => id !== b.root);
  // A person's interrupt whose year is a typo: the root takes it in, as any interrupt.
  fs.appendFileSync(b.store.paths(b.root).events, `${JSON.stringify({ type: 'user.interrupt', created_at: '2999-01-01T00:00:00.000Z', reason: 'stop' })}\n`);
  b.deps.clock.advance(10);
  await wake(b.rt, b.root);
  assert.equal(b.store.snapshot(b.root).last_interrupt_at, '2999-01-01T00:00:00.000Z');
  // Then a new message: the root works again, and its spawns are not refused as "interrupted after this run began".
  b.deps.clock.advance(10);
  b.store.appendUserEvent(b.root, { type: 'user.message', content: [{ type: 'text', text: 'go on' }] });
  const made = b.store.listIds().length;
  await wake(b.rt, b.root);
  assert.equal(b.store.snapshot(b.root).spawn_refusals.count, 0, JSON.stringify(b.store.snapshot(b.root).spawn_refusals.last));
  assert.equal(b.store.listIds().length, made + 4);
  // A child given a new message (after the cascade interrupted it) works on it: not born interrupted by the year 2999.
  b.deps.clock.advance(10);
  b.store.appendUserEvent(children[0]!, { type: 'user.message', content: [{ type: 'text', text: 'carry on' }] });
  const asked = b.requests.length;
  await wake(b.rt, children[0]!);
  assert.ok(b.requests.length > asked, 'the child asked its model');
});
