/**
 * Delegation's plumbing in-process: a child's report reaches its parent
 * once (repeats dropped, a missed one repaired), the parent reads it as a
 * user turn on a `child` run, interrupts cascade, and a parent's budget
 * bounds its tree. A queued model port, the memory sandbox, the real store.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { sendMessage } from '../../src/core/ops/session-ops.js';
import { createSession } from '../../src/core/ops/create-session.js';
import { wake } from '../../src/core/run/wake.js';
import { reportToParent } from '../../src/core/run/child-report.js';
import { cascadeInterrupt } from '../../src/core/delegation/delegation-cascade.js';
import type { SessionEvent } from '../../src/core/schema/index.js';
import type { Reply } from '../helpers/queued-model.js';
import { unitRun } from '../helpers/unit-run.js';

function setup(t: TestContext, replies: Reply[], limits: Record<string, unknown> = {}) {
  const u = unitRun(t, { agents: { boss: { model: 'm', system: 'You are boss.', limits }, worker: { model: 'm', system: 'You are worker.', limits } }, replies });
  const parent = u.newSession('boss');
  const child = u.newSession('worker', { parentSessionId: parent });
  return { h: u.h, model: u.model!, store: u.store, rt: u.rt, deps: u.deps, parent, child, events: u.events };
}

test('a child run that ends reports to its parent once; the parent wakes on it (trigger child) and reads it as a user turn', async (t) => {
  const s = setup(t, [{ text: 'the answer is 42' }, { text: 'thanks, noted' }]);
  sendMessage(s.store, s.child, 'compute the answer');
  const r = await wake(s.rt, s.child);
  assert.equal(r.stop_reason?.type, 'end_turn');
  const delivered = s.events(s.parent).filter((e) => e.type === 'agent.thread_message_received' || e.type === 'session.thread_status_idle');
  assert.deepEqual(delivered.map((e) => e.type), ['agent.thread_message_received', 'session.thread_status_idle']);
  const [msg, idle] = delivered as [Extract<SessionEvent, { type: 'agent.thread_message_received' }>, Extract<SessionEvent, { type: 'session.thread_status_idle' }>];
  assert.equal(msg.delivery_key, `run:${r.wake_id}`);
  assert.equal(msg.content[0]!.text, 'the answer is 42');
  assert.deepEqual(idle.stop_reason, { type: 'end_turn' });
  assert.equal(idle.tree_usage?.input_tokens, 10);
  // Delivering again (the daemon's repair racing the run's own) changes nothing for the parent.
  assert.equal(reportToParent(s.rt, s.child), 'already');
  fs.appendFileSync(s.store.paths(s.parent).events, `${JSON.stringify({ ...msg, id: 'sevt_repeat_1' })}\n${JSON.stringify({ ...idle, id: 'sevt_repeat_2' })}\n`);
  const snap = s.store.snapshot(s.parent);
  assert.equal(snap.pending_events.length, 2, 'the repeat is dropped by the fold');
  assert.equal(snap.children[s.child]?.last_report_run, r.wake_id);
  assert.equal(snap.children[s.child]?.status, 'end_turn');
  const pr = await wake(s.rt, s.parent);
  assert.equal(pr.trigger, 'child');
  const last = JSON.stringify(s.model.requests.at(-1)!.messages.at(-1));
  assert.match(last, new RegExp(`child session ${s.child} \\(agent worker\\) reports; its words, quoted:\\]\\\\n> the answer is 42`));
  assert.match(last, /is idle: end_turn/);
  assert.equal((last.match(/the answer is 42/g) ?? []).length, 1, 'read once');
  assert.equal(s.store.snapshot(s.parent).tree_usage.input_tokens, 20, 'the tree counts the child');
});

test('a report lost to a crash between the child\'s idle and the parent\'s append is repaired from the two logs, once', async (t) => {
  const s = setup(t, [{ text: 'done' }]);
  sendMessage(s.store, s.child, 'work');
  // The parent's folder is away while the child's run ends: its report cannot be written.
  const dir = s.store.paths(s.parent).dir;
  fs.renameSync(dir, `${dir}.away`);
  await wake(s.rt, s.child);
  fs.renameSync(`${dir}.away`, dir);
  assert.equal(s.events(s.parent).filter((e) => e.type === 'session.thread_status_idle').length, 0);
  assert.equal(reportToParent(s.rt, s.child), 'delivered');
  assert.equal(reportToParent(s.rt, s.child), 'already');
  assert.equal(s.events(s.parent).filter((e) => e.type === 'session.thread_status_idle').length, 1);
});

test('interrupting a parent interrupts its busy children through their logs', async (t) => {
  const s = setup(t, [{ text: 'child works' }, { text: 'ok' }]);
  sendMessage(s.store, s.child, 'first');
  await wake(s.rt, s.child); // a report makes the child known to the parent
  sendMessage(s.store, s.child, 'a second job, not yet run');
  s.store.appendUserEvent(s.parent, { type: 'user.interrupt', reason: 'stop everything' });
  await wake(s.rt, s.parent);
  const got = s.events(s.child).filter((e) => e.type === 'user.interrupt');
  assert.equal(got.length, 1);
  assert.match(got[0]!.type === 'user.interrupt' ? String(got[0]!.reason) : '', new RegExp(`parent session ${s.parent} was interrupted`));
});

test('a hand-written report naming a sibling does not hide the sibling from the interrupt cascade', async (t) => {
  const s = setup(t, [{ text: 'A done' }, { text: 'B done' }, { text: 'A read it' }]);
  const b = createSession(s.store, { agent: 'worker', parentSessionId: s.parent }).id;
  sendMessage(s.store, s.child, 'job A');
  await wake(s.rt, s.child); // A, then B, become known to the parent by their reports
  sendMessage(s.store, b, 'job B');
  await wake(s.rt, b);
  // A line someone appended to A's log, posing as a report from B, which A's next run takes in: B is now among A's children.
  s.store.appendUserEvent(s.child, { type: 'agent.thread_message_received', from_session_thread_id: b, from_agent_name: 'worker', content: [{ type: 'text', text: 'not really' }], delivery_key: 'run:forged' });
  await wake(s.rt, s.child);
  assert.ok(b in s.store.snapshot(s.child).children);
  assert.deepEqual(Object.keys(s.store.snapshot(s.parent).children), [s.child, b], 'A is walked first');
  sendMessage(s.store, b, 'a second job for B, not yet run');
  s.store.appendUserEvent(s.parent, { type: 'user.interrupt', reason: 'stop everything' });
  await wake(s.rt, s.parent);
  assert.equal(s.events(b).filter((e) => e.type === 'user.interrupt').length, 1, 'B, busy, is interrupted');
  assert.equal(s.events(s.child).filter((e) => e.type === 'user.interrupt').length, 0, 'A, idle with nothing below it, is not');
});

test('the cascade reads a bounded number of sessions: past the bound, the child being looked at counts as busy', async (t) => {
  const s = setup(t, [{ text: 'grandchild done' }, { text: 'child noted' }]);
  const grand = createSession(s.store, { agent: 'worker', parentSessionId: s.child }).id;
  sendMessage(s.store, grand, 'a part');
  await wake(s.rt, grand);
  await wake(s.rt, s.child); // the child knows its child, and reports to the parent; all idle, nothing queued
  assert.deepEqual(cascadeInterrupt(s.store, s.parent, 'within the bound'), [], 'an idle tree has nothing to stop');
  // The parent and the child are read; the grandchild would be the third.
  assert.deepEqual(cascadeInterrupt(s.store, s.parent, 'past the bound', { maxSessions: 2 }), [s.child]);
  assert.equal(s.events(s.child).filter((e) => e.type === 'user.interrupt').length, 1);
});

test('a parent\'s budget covers its tree: once its tree spent it, the child\'s next run stops with budget_reached', async (t) => {
  const s = setup(t, [{ text: 'spent 15 tokens' }, { text: 'never' }]);
  s.store.appendEvents(s.parent, [{ type: 'session.updated', overrides: { session_token_budget: 10 } }]);
  sendMessage(s.store, s.child, 'work');
  await wake(s.rt, s.child);
  // The report took the child's 15 tokens into the parent's tree: the parent's 10 is spent.
  s.deps.clock.advance(1000);
  sendMessage(s.store, s.child, 'more');
  const r = await wake(s.rt, s.child);
  assert.equal(r.stop_reason?.type, 'budget_reached');
  assert.match(r.errors.join('\n'), new RegExp(`the session tree of ${s.parent} spent 15 tokens of that session's budget of 10`));
  // The parent, woken by the report, stops too.
  const p = await wake(s.rt, s.parent);
  assert.equal(p.stop_reason?.type, 'budget_reached');
  assert.equal(s.model.requests.length, 1, 'the child asked the model no more');
});

test('an interrupt stops the whole tree: an idle child whose own child works is interrupted too, and the reports of the stopped tree wait for the next message', async (t) => {
  const s = setup(t, [{ text: 'grandchild: first part done' }, { text: 'child: noted' }, { text: 'parent: noted' }, { text: 'parent: read both' }]);
  const grand = createSession(s.store, { agent: 'worker', parentSessionId: s.child }).id;
  // The grandchild's report makes it known to the child, the child's to the parent; every report is read.
  sendMessage(s.store, grand, 'first part');
  await wake(s.rt, grand);
  assert.equal((await wake(s.rt, s.child)).trigger, 'child');
  assert.equal((await wake(s.rt, s.parent)).trigger, 'child');
  assert.equal(s.model.requests.length, 3);
  // Now the child is idle with nothing pending, and its child has work queued.
  sendMessage(s.store, grand, 'second part, not yet run');
  assert.equal(s.store.snapshot(s.child).status, 'idle');
  assert.equal(s.store.snapshot(s.child).pending_events.length, 0);

  s.store.appendUserEvent(s.parent, { type: 'user.interrupt', reason: 'stop the tree' });
  await wake(s.rt, s.parent);
  const interruptsOf = (id: string) => s.events(id).filter((e) => e.type === 'user.interrupt');
  assert.equal(interruptsOf(s.child).length, 1, 'the idle child is interrupted, for the sake of its busy child');
  // The child's run takes the interrupt in, passes it on, and asks no model; its report reaches the parent.
  const c = await wake(s.rt, s.child);
  assert.equal(c.stop_reason?.type, 'end_turn');
  assert.equal(interruptsOf(grand).length, 1, 'the grandchild is interrupted');
  assert.equal(s.model.requests.length, 3, 'no model request since the interrupt');
  const parent = s.store.snapshot(s.parent);
  assert.ok(parent.pending_events.some((p) => p.type === 'session.thread_status_idle'), 'the report is in the parent\'s log');
  // The parent is not woken by it: the tree stays stopped.
  const p = await wake(s.rt, s.parent);
  assert.deepEqual([p.outcome, p.skip_reason], ['skipped', 'interrupted']);
  assert.equal(s.model.requests.length, 3);
  // The next message wakes the parent, which reads the report with it.
  sendMessage(s.store, s.parent, 'what happened?');
  const next = await wake(s.rt, s.parent);
  assert.equal(next.trigger, 'event');
  assert.equal(s.model.requests.length, 4);
  assert.match(JSON.stringify(s.model.requests.at(-1)!.messages.at(-1)), new RegExp(`child session ${s.child} \\(agent worker\\) is idle`));
  // And reports after that wake it as usual again.
  assert.equal(s.store.snapshot(s.parent).reports_wait, false);
});
