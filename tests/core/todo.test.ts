/**
 * The `todo` tool (docs/runs.md, "The plan"): the agent's plan is the input
 * of its last successful call, mirrored in runtime/plan.json while the run
 * goes on and rebuilt from the log; a bad list is an error result naming the
 * field; the stale-loop guard counts a step marked done as progress and a
 * plan rewritten without one as none.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { sendMessage } from '../../src/core/ops/session-ops.js';
import { iso } from '../../src/core/foundation/clock.js';
import { PlanFile, type SessionEvent, type TodoItem } from '../../src/core/schema/index.js';
import { marksDone } from '../../src/core/run/plan-file.js';
import { planView } from '../../src/core/views/plan-view.js';
import { resolveEscalation } from '../../src/core/ops/resolve-escalation.js';
import type { ModelProvider } from '../../src/core/model/provider.js';
import { queuedModel, type Reply } from '../helpers/queued-model.js';
import { unitRun } from '../helpers/unit-run.js';

/** A unit run whose model notes, at each request, what runtime/plan.json holds then. */
function setup(t: TestContext, replies: Reply[], agent: Record<string, unknown> = {}) {
  const q = queuedModel(replies);
  const seen: Array<unknown> = [];
  let planFile = '';
  const model: ModelProvider = {
    name: 'queued',
    complete(req, signal) {
      seen.push(fs.existsSync(planFile) ? JSON.parse(fs.readFileSync(planFile, 'utf8')) : null);
      return q.complete(req, signal);
    },
  };
  const u = unitRun(t, { agents: { unit: agent }, model });
  const id = u.newSession();
  planFile = path.join(u.store.paths(id).runtime, 'plan.json');
  const revisit = () => u.store.scheduleWake(id, { due_at: iso(u.deps.clock.now()), reason: 'check again', source: 'cli' });
  return { ...u, id, q, seen, planFile, revisit, events: () => u.events(id), run: () => u.run(id) };
}

const todo = (...items: Array<[string, TodoItem['status']]>) => ({ name: 'todo', input: { items: items.map(([content, status]) => ({ content, status })) } });
const results = (evs: SessionEvent[]) => evs.flatMap((e) => (e.type === 'agent.tool_result' ? [e] : []));
const guards = (evs: SessionEvent[]) => evs.flatMap((e) => (e.type === 'session.guard' ? [`${e.guard}:${e.action}`] : []));

test('todo: each call replaces the plan; runtime/plan.json follows the log during the run and is rebuilt from it', async (t) => {
  const s = setup(t, [
    { tools: [todo(['Read the spec', 'in_progress'], ['Write the code', 'pending'])] },
    { tools: [todo(['Read the spec', 'done'], ['Write the code', 'in_progress'], ['Test it', 'pending'])] },
    { text: 'Working on it.' },
    { text: 'Still on it.' },
  ]);
  sendMessage(s.store, s.id, 'build it');
  await s.run();
  const res = results(s.events());
  assert.deepEqual(res.map((r) => [r.is_error, r.content[0]!.text]), [
    [false, 'Plan updated: 2 steps: 0 done, 1 in progress, 1 pending.'],
    [false, 'Plan updated: 3 steps: 1 done, 1 in progress, 1 pending.'],
  ]);
  // Live: the second request already saw the first plan; the third the second.
  assert.equal(s.seen[0], null);
  assert.deepEqual((s.seen[1] as PlanFile).items.map((i) => i.status), ['in_progress', 'pending']);
  const want: PlanFile = {
    items: [
      { content: 'Read the spec', status: 'done' },
      { content: 'Write the code', status: 'in_progress' },
      { content: 'Test it', status: 'pending' },
    ],
    updated_at: res[1]!.created_at,
  };
  assert.deepEqual(s.seen[2], want);
  // The file is exactly {items, updated_at}; the view reads it back.
  assert.deepEqual(JSON.parse(fs.readFileSync(s.planFile, 'utf8')), want);
  assert.deepEqual(planView(s.store, s.id), want);

  // A cache: lost or spoiled, the next run writes it again from the log as it starts.
  fs.writeFileSync(s.planFile, '{"items": "spoiled"}');
  assert.equal(planView(s.store, s.id), null);
  // Not through a symlink (to a valid plan elsewhere), and not blocked by a FIFO in its place.
  const elsewhere = path.join(path.dirname(s.planFile), '..', 'elsewhere.json');
  fs.writeFileSync(elsewhere, JSON.stringify(want));
  fs.rmSync(s.planFile);
  fs.symlinkSync(elsewhere, s.planFile);
  assert.equal(planView(s.store, s.id), null);
  fs.rmSync(s.planFile);
  execFileSync('mkfifo', [s.planFile]);
  assert.equal(planView(s.store, s.id), null);
  fs.rmSync(s.planFile);
  sendMessage(s.store, s.id, 'go on');
  await s.run();
  assert.deepEqual(s.seen[3], want);
  assert.deepEqual(planView(s.store, s.id), want);
});

test('todo: a malformed list is an error result naming the field, and the plan stays as it was', async (t) => {
  const long = 'x'.repeat(501);
  const many = Array.from({ length: 51 }, (_, i) => [`step ${i}`, 'pending'] as [string, 'pending']);
  const s = setup(t, [
    { tools: [todo(['Keep me', 'pending'])] },
    { tools: [{ name: 'todo', input: { items: [{ content: 'a', status: 'started' }] } }] },
    { tools: [todo([long, 'pending'])] },
    { tools: [todo(...many)] },
    { tools: [{ name: 'todo', input: { items: [{ content: '   ', status: 'done' }] } }] },
    { tools: [{ name: 'todo', input: { todos: [] } }] },
    { text: 'ok' },
  ]);
  sendMessage(s.store, s.id, 'plan');
  await s.run();
  const bad = results(s.events()).slice(1);
  assert.ok(bad.every((r) => r.is_error));
  const texts = bad.map((r) => r.content[0]!.text);
  assert.match(texts[0]!, /^invalid input for todo: items\.0\.status: .*"pending".*"in_progress".*"done"/);
  assert.match(texts[1]!, /^invalid input for todo: items\.0\.content: .*500/);
  assert.match(texts[2]!, /^invalid input for todo: items: .*50/);
  assert.match(texts[3]!, /^invalid input for todo: items\.0\.content/);
  assert.match(texts[4]!, /^invalid input for todo: .*todos/);
  assert.deepEqual(planView(s.store, s.id)?.items, [{ content: 'Keep me', status: 'pending' }]);
});

test('todo: the stale-loop guard counts a plan rewritten without a step done as no progress', async (t) => {
  const s = setup(
    t,
    [
      { text: 'Let me plan.', tools: [todo(['Fix the bug', 'pending'])] },
      { text: 'Replanning.', tools: [todo(['Fix the bug', 'in_progress'])] },
      { text: 'Fixed it, I think.' },
    ],
    { guards: { stale_loop: { replan_at: 2, escalate_at: 0 } } },
  );
  sendMessage(s.store, s.id, 'fix it');
  await s.run();
  assert.deepEqual(guards(s.events()), ['stale_loop:replan']);
  assert.equal(s.q.requests.length, 3);
  // The nudge follows the plan's tool result in the same user turn; every tool use is answered.
  const last = s.q.requests[2]!.messages.at(-1)!;
  assert.equal(last.role, 'user');
  assert.deepEqual((last.content as Array<{ type: string }>).map((b) => b.type), ['tool_result', 'text']);
  assert.match(JSON.stringify(last), /stale_loop guard: that is 2 replies in a row without progress/);
});

test('todo: the stale-loop guard counts a step marked done as progress; the count starts again after it', async (t) => {
  const s = setup(
    t,
    [
      { text: 'Let me plan.', tools: [todo(['Fix the bug', 'in_progress'])] },
      { text: 'Done with it.', tools: [todo(['Fix the bug', 'done'])] },
      { text: 'All done.' },
      { text: 'Nothing else.' },
    ],
    { guards: { stale_loop: { replan_at: 2, escalate_at: 0 } } },
  );
  sendMessage(s.store, s.id, 'fix it');
  await s.run(); // plan (1) · done (progress: 0) · "All done." (1)
  assert.deepEqual(guards(s.events()), []);
  s.revisit();
  await s.run(); // "Nothing else." (2) → replan
  assert.deepEqual(guards(s.events()), ['stale_loop:replan']);
});

test('marksDone: a content done more often than before; a step renamed while done is a new one', () => {
  const it = (content: string, status: TodoItem['status']): TodoItem => ({ content, status });
  assert.equal(marksDone([], [it('a', 'pending')]), false);
  assert.equal(marksDone([], [it('a', 'done')]), true);
  assert.equal(marksDone([it('a', 'in_progress')], [it('a', 'done')]), true);
  assert.equal(marksDone([it('a', 'done'), it('b', 'pending')], [it('b', 'pending'), it('a', 'done')]), false);
  assert.equal(marksDone([it('a', 'done')], [it('a', 'done'), it('a', 'done')]), true);
  assert.equal(marksDone([it('a', 'done')], [it('a2', 'done')]), true);
  assert.equal(marksDone([it('a', 'done')], []), false);
});

test('todo: at escalate_at after a turn that only rewrote the plan, the escalation joins that turn and its answer pairs up', async (t) => {
  const s = setup(
    t,
    [
      { text: 'Let me plan.', tools: [todo(['Fix the bug', 'pending'])] },
      { text: 'Replanning.', tools: [todo(['Fix the bug', 'in_progress'])] },
      { text: 'Stopping.' },
    ],
    { guards: { stale_loop: { replan_at: 0, escalate_at: 2 } } },
  );
  sendMessage(s.store, s.id, 'fix it');
  const r = await s.run();
  assert.equal(r.stop_reason?.type, 'requires_action');
  assert.deepEqual(guards(s.events()), ['stale_loop:escalate']);
  const esc = s.events().find((e) => e.type === 'agent.custom_tool_use')!;
  resolveEscalation(s.store, s.id, esc.id, { pick: 2 });
  await s.run();
  const req = s.q.requests[2]!;
  const asst = req.messages.at(-2)!;
  assert.equal(asst.role, 'assistant');
  assert.deepEqual((asst.content as Array<{ type: string }>).map((b) => b.type), ['text', 'tool_use', 'tool_use']);
  const uses = (asst.content as Array<{ type: string; id?: string }>).flatMap((b) => (b.type === 'tool_use' ? [b.id] : []));
  const answered = (req.messages.at(-1)!.content as Array<{ type: string; tool_use_id?: string }>).flatMap((b) => (b.type === 'tool_result' ? [b.tool_use_id] : []));
  assert.deepEqual(answered, uses);
});
