/**
 * The guards and escalation in-process (docs/context.md): a queued model
 * port, the memory sandbox, a manual clock, the real store, fold, loop and
 * conversation on a temp home.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { sendMessage } from '../../src/core/ops/session-ops.js';
import { wake } from '../../src/core/run/wake.js';
import { iso } from '../../src/core/foundation/clock.js';
import { AgentDefinition, type SessionEvent } from '../../src/core/schema/index.js';
import { resolveEscalation } from '../../src/core/ops/resolve-escalation.js';
import { saysItWillAct } from '../../src/core/run/premature-intent-guard.js';
import { STALE_OPTIONS } from '../../src/core/run/stale-loop-guard.js';
import { readTarget } from '../../src/core/run/duplicate-read-guard.js';
import { OpenboaError } from '../../src/core/foundation/errors.js';
import type { ModelRequest } from '../../src/core/model/provider.js';
import type { Reply } from '../helpers/queued-model.js';
import { MemorySandbox } from '../../src/core/sandbox/memory-sandbox.js';
import { hasSchema, validateEvent } from '../helpers/event-schema.js';
import { REPO } from '../helpers/home.js';
import { cliInProcess } from '../helpers/cli.js';
import { unitRun } from '../helpers/unit-run.js';

function setup(t: TestContext, replies: Reply[], agent: Record<string, unknown> = {}, files: Record<string, string> = {}) {
  const sandbox = new MemorySandbox({ files });
  const u = unitRun(t, { agents: { unit: agent }, replies, sandbox: () => sandbox });
  const id = u.newSession();
  const revisit = () => u.store.scheduleWake(id, { due_at: iso(u.deps.clock.now()), reason: 'check again', source: 'cli' });
  return { h: u.h, model: u.model!, store: u.store, rt: u.rt, id, deps: u.deps, events: () => u.events(id), sandbox, revisit, run: () => u.run(id) };
}

const guards = (evs: SessionEvent[]) => evs.flatMap((e) => (e.type === 'session.guard' ? [`${e.guard}:${e.action}`] : []));
const lastUserText = (req: ModelRequest) => JSON.stringify(req.messages.at(-1));

/** Every tool_use of an assistant turn is answered by a tool_result in the very next (user) message, and roles alternate. */
function assertValidRequest(req: ModelRequest) {
  req.messages.forEach((m, i) => {
    if (i > 0) assert.notEqual(m.role, req.messages[i - 1]!.role, `message ${i} repeats the role ${m.role}`);
    if (m.role !== 'assistant') return;
    const uses = (m.content as Array<{ type: string; id?: string }>).filter((b) => b.type === 'tool_use').map((b) => b.id);
    if (!uses.length) return;
    const next = req.messages[i + 1];
    assert.ok(next && next.role === 'user', `tool uses of message ${i} have no user turn after them`);
    const results = new Set((next.content as Array<{ type: string; tool_use_id?: string }>).filter((b) => b.type === 'tool_result').map((b) => b.tool_use_id));
    for (const u of uses) assert.ok(results.has(u), `tool_use ${u} has no tool_result in the next message`);
  });
}

/** Our events validate against the SDK's schema, or are our own type documented in docs/format.md. */
function assertEventsValid(evs: SessionEvent[]) {
  const format = fs.readFileSync(path.join(REPO, 'docs', 'format.md'), 'utf8');
  for (const e of evs) {
    if (e.type.startsWith('user.')) continue;
    if (hasSchema(e.type)) assert.deepEqual(validateEvent(e as unknown as Record<string, unknown>), [], `${e.type} ${e.id}`);
    else assert.ok(format.includes(`| \`${e.type}\` |`), `${e.type} is not documented in docs/format.md`);
  }
}

test('PrematureIntent: a reply that says it will act without a tool call is reminded once, then the turn ends', async (t) => {
  const s = setup(t, [{ text: 'Sure. I will run the tests now.' }, { text: "Let me check the config first." }]);
  sendMessage(s.store, s.id, 'are the tests green?');
  const r = await s.run();
  assert.equal(r.stop_reason?.type, 'end_turn');
  assert.equal(s.model.requests.length, 2, 'one reminder, then the turn ends however the reply reads');
  assert.deepEqual(guards(s.events()), ['premature_intent:remind']);
  assert.match(lastUserText(s.model.requests[1]!), /premature_intent guard: your last reply says \\"I will run the tests now\.\\" but it called no tool/);
  assertValidRequest(s.model.requests[1]!);
  // The reminder is in the log: the next run rebuilds the same conversation around it.
  sendMessage(s.store, s.id, 'ok');
  await s.run();
  const [a, b] = [s.model.requests[1]!, s.model.requests[2]!];
  assert.deepEqual(b.messages.slice(0, a.messages.length - 1), a.messages.slice(0, -1));
  assert.match(JSON.stringify(b.messages), /premature_intent guard/);
  assertEventsValid(s.events());
});

test('PrematureIntent: a run that dies right after the reminder does not remind twice on recovery', async (t) => {
  const s = setup(t, [{ text: "I'll run the tests." }, { text: "I'll run them now." }]);
  sendMessage(s.store, s.id, 'go');
  const dies = { afterTurn: () => { throw new Error('killed'); } };
  await wake(s.rt, s.id, { hooks: (d) => ({ ...d, afterTurn: [...d.afterTurn, dies] }) }).catch(() => undefined);
  assert.deepEqual(guards(s.events()), ['premature_intent:remind']);
  s.deps.clock.advance(3_600_000); // past the failed run's backoff
  const r = await s.run();
  assert.equal(r.stop_reason?.type, 'end_turn');
  assert.equal(s.model.requests.length, 2);
  assert.match(lastUserText(s.model.requests[1]!), /premature_intent guard/);
  assert.deepEqual(guards(s.events()), ['premature_intent:remind'], 'the reply to the reminder ends the turn');
});

test('StaleLoop: a run that dies right after the reply acts on recovery, once', async (t) => {
  const s = setup(t, [{ text: 'Hmm.' }, { text: 'Still hmm.' }], { guards: { stale_loop: { replan_at: 1, escalate_at: 0 } } });
  sendMessage(s.store, s.id, 'go');
  const dies = { afterTurn: () => { throw new Error('killed'); } };
  await wake(s.rt, s.id, { hooks: (d) => ({ ...d, afterTurn: [dies] }) }).catch(() => undefined);
  assert.deepEqual(guards(s.events()), []);
  s.deps.clock.advance(3_600_000); // past the failed run's backoff
  const r = await s.run();
  assert.equal(r.stop_reason?.type, 'end_turn');
  assert.deepEqual(guards(s.events()), ['stale_loop:replan']);
  assert.equal(s.model.requests.length, 2);
  assert.match(lastUserText(s.model.requests[1]!), /stale_loop guard: that is 1 replies/);
});

test('PrematureIntent: the heuristic reads only the last sentences, wants an action verb, and lets a question be', () => {
  assert.ok(saysItWillAct("I'll run the test suite."));
  assert.ok(saysItWillAct('Done with the first part. Next I will edit config.ts:'));
  assert.ok(saysItWillAct("Now let's look at the logs"));
  assert.equal(saysItWillAct("I'll wait for your answer."), null);
  assert.equal(saysItWillAct('Let me know if that works.'), null);
  assert.equal(saysItWillAct('Should I run the tests?'), null);
  assert.equal(saysItWillAct("I'll run it. Then I tried X. It worked. All done."), null, 'only the last two sentences count');
  assert.equal(saysItWillAct('All tests pass.'), null);
});

test('PrematureIntent: off in agent.yaml, no reminder', async (t) => {
  const s = setup(t, [{ text: "I'll run the tests." }], { guards: { premature_intent: false } });
  sendMessage(s.store, s.id, 'go');
  await s.run();
  assert.equal(s.model.requests.length, 1);
  assert.deepEqual(guards(s.events()), []);
});

test('StaleLoop: replies without progress are counted from the log across runs: a replan nudge at 3, an escalation at 6, answered by pick', async (t) => {
  const s = setup(t, [
    { text: 'Thinking about it.' },
    { text: 'Still thinking.' },
    { text: 'Hmm.' },
    { text: 'No plan yet.' },
    { text: 'Nothing new.' },
    { text: 'Nope.' },
    { tools: [{ name: 'bash', input: { command: 'true' } }] },
    { text: 'Stopped.' },
  ]);
  sendMessage(s.store, s.id, 'find a plan');
  await s.run(); // 1
  s.revisit();
  await s.run(); // 2: a revisit is no progress
  s.revisit();
  const r3 = await s.run(); // 3 → replan, asked again → 4
  assert.equal(r3.stop_reason?.type, 'end_turn');
  assert.deepEqual(guards(s.events()), ['stale_loop:replan']);
  assert.equal(s.model.requests.length, 4);
  assert.match(lastUserText(s.model.requests[3]!), /stale_loop guard: that is 3 replies in a row without progress/);
  s.revisit();
  await s.run(); // 5
  s.revisit();
  const r6 = await s.run(); // 6 → escalation
  assert.equal(r6.stop_reason?.type, 'requires_action');
  const evs = s.events();
  assert.deepEqual(guards(evs), ['stale_loop:replan', 'stale_loop:escalate']);
  const esc = evs.find((e) => e.type === 'agent.custom_tool_use');
  assert.ok(esc && esc.type === 'agent.custom_tool_use');
  assert.equal(esc.name, 'escalate');
  assert.match(esc.model_tool_use_id, /^toolu_openboa_[A-Za-z0-9_-]+$/);
  assert.deepEqual(r6.stop_reason, { type: 'requires_action', event_ids: [esc.id] });
  const g = evs.find((e) => e.type === 'session.guard' && e.action === 'escalate');
  assert.equal(g?.type === 'session.guard' && g.tool_use_id, esc.id);
  assert.deepEqual(s.store.snapshot(s.id).open_tool_uses.map((u) => [u.id, u.kind]), [[esc.id, 'custom']]);

  resolveEscalation(s.store, s.id, esc.id, { pick: 2 });
  const r7 = await s.run();
  assert.equal(r7.stop_reason?.type, 'end_turn');
  const req = s.model.requests[6]!;
  assertValidRequest(req);
  // The runtime's tool use sits in the last reply's assistant turn; the answer is its result, naming the option's text.
  const asst = req.messages.at(-2)!;
  assert.equal(asst.role, 'assistant');
  assert.deepEqual((asst.content as Array<{ type: string }>).map((b) => b.type), ['text', 'tool_use']);
  assert.match(lastUserText(req), new RegExp(`"tool_use_id":"${esc.model_tool_use_id}".*The person chose option 2: ${STALE_OPTIONS[1]}`));
  // The person's answer and the tool call are progress: the count starts again.
  assert.deepEqual(guards(s.events()), ['stale_loop:replan', 'stale_loop:escalate']);
  assertEventsValid(s.events());
});

test('StaleLoop: off with false, and each step off with 0', async (t) => {
  const s = setup(t, [{ text: 'a' }, { text: 'b' }, { text: 'c' }], { guards: { stale_loop: { replan_at: 0, escalate_at: 2 } } });
  sendMessage(s.store, s.id, 'go');
  await s.run();
  s.revisit();
  const r = await s.run();
  assert.equal(r.stop_reason?.type, 'requires_action');
  assert.deepEqual(guards(s.events()), ['stale_loop:escalate']);
  assert.equal(AgentDefinition.parse({ guards: { stale_loop: false } }).guards.stale_loop, false);
  assert.deepEqual(AgentDefinition.parse({ guards: { stale_loop: true } }).guards.stale_loop, { replan_at: 3, escalate_at: 6 });
  assert.deepEqual(AgentDefinition.parse({}).guards, { premature_intent: true, stale_loop: { replan_at: 3, escalate_at: 6 }, duplicate_read: { warn_at: 2, stop_at: 3 } });
  assert.throws(() => AgentDefinition.parse({ guards: { stale_loop: { replan: 3 } } }));
});

test('DuplicateRead: the same range read again is warned, a third time refused with why; a write resets the count', async (t) => {
  const read = (r?: [number, number]) => ({ name: 'read', input: { file_path: 'notes.txt', ...(r ? { view_range: r } : {}) } });
  const s = setup(
    t,
    [
      { tools: [read()] },
      { tools: [{ name: 'read', input: { file_path: '/workspace/./notes.txt', view_range: [1, 0] } }] },
      { tools: [read()] },
      { tools: [read([1, 1])] },
      { tools: [{ name: 'write', input: { file_path: 'notes.txt', content: 'new\n' } }] },
      { tools: [read()] },
      { text: 'done' },
    ],
    {},
    { '/workspace/notes.txt': 'old\nline two\n' },
  );
  sendMessage(s.store, s.id, 'read notes');
  await s.run();
  const results = s.events().flatMap((e) => (e.type === 'agent.tool_result' ? [{ text: e.content[0]!.text, err: e.is_error }] : []));
  assert.equal(results.length, 6);
  assert.doesNotMatch(results[0]!.text, /duplicate_read/);
  assert.match(results[1]!.text, /old[\s\S]*\[openboa duplicate_read guard: this is read number 2 of \/workspace\/notes\.txt \(the whole file\)/);
  assert.equal(results[1]!.err, false);
  assert.match(results[2]!.text, /^not run \(duplicate_read guard\): this is read number 3 of \/workspace\/notes\.txt/);
  assert.equal(results[2]!.err, true);
  assert.doesNotMatch(results[3]!.text, /duplicate_read/, 'another range is another read');
  assert.doesNotMatch(results[5]!.text, /duplicate_read/, 'the write reset the count');
  assert.match(results[5]!.text, /new/);
  assert.equal(readTarget({ file_path: 'a/../b.txt', view_range: [3, -1] })?.label, '/workspace/b.txt (lines 3-end)');
});

test('DuplicateRead: off with false', async (t) => {
  const read = { name: 'read', input: { file_path: 'n.txt' } };
  const s = setup(t, [{ tools: [read] }, { tools: [read] }, { tools: [read] }, { text: 'ok' }], { guards: { duplicate_read: false } }, { '/workspace/n.txt': 'x' });
  sendMessage(s.store, s.id, 'go');
  await s.run();
  assert.ok(s.events().every((e) => e.type !== 'agent.tool_result' || !/duplicate_read/.test(e.content[0]!.text)));
});

const ESC = { situation: 'The deploy needs a database migration that drops a column.', options: ['Migrate now', 'Wait for the weekend'], confidence: 0.6, recommendation: 2 };

test('escalate: the session pauses on it as a custom tool use; a message answers it, and the model reads the answer', async (t) => {
  const s = setup(t, [{ text: 'Asking.', tools: [{ name: 'escalate', input: ESC }] }, { text: 'Will wait.' }]);
  sendMessage(s.store, s.id, 'deploy');
  const r = await s.run();
  assert.equal(r.stop_reason?.type, 'requires_action');
  const use = s.events().find((e) => e.type === 'agent.custom_tool_use');
  assert.ok(use && use.type === 'agent.custom_tool_use' && use.name === 'escalate');
  assert.ok(s.model.requests[0]!.tools.some((x) => x.name === 'escalate'), 'escalate is offered like the other built-ins');
  resolveEscalation(s.store, s.id, use.id, { message: 'ask the DBA first' });
  await s.run();
  assertValidRequest(s.model.requests[1]!);
  assert.match(lastUserText(s.model.requests[1]!), /"tool_use_id":"toolu_q_1_0".*The person answered: ask the DBA first/);
  assertEventsValid(s.events());
});

test('escalate: picked by number, the result names the option\'s text; bad answers are refused naming the field', async (t) => {
  const s = setup(t, [{ tools: [{ name: 'escalate', input: ESC }] }, { text: 'ok' }]);
  sendMessage(s.store, s.id, 'deploy');
  await s.run();
  const use = s.events().find((e) => e.type === 'agent.custom_tool_use')!;
  const field = (f: () => unknown) => {
    try {
      f();
    } catch (e) {
      assert.ok(OpenboaError.is(e));
      return e.data.field ?? e.message;
    }
    assert.fail('expected an error');
  };
  assert.equal(field(() => resolveEscalation(s.store, s.id, use.id, { pick: 3 })), 'pick');
  assert.equal(field(() => resolveEscalation(s.store, s.id, use.id, { pick: 0 })), 'pick');
  assert.equal(field(() => resolveEscalation(s.store, s.id, use.id, { message: '  ' })), 'message');
  const msg = s.events().find((e) => e.type === 'user.message')!;
  assert.match(String(field(() => resolveEscalation(s.store, s.id, msg.id, { pick: 1 }))), /is a user\.message .* not an escalation/);
  resolveEscalation(s.store, s.id, use.id, { pick: 1 });
  assert.match(String(field(() => resolveEscalation(s.store, s.id, use.id, { pick: 2 }))), /already answered/);
  await s.run();
  assert.match(lastUserText(s.model.requests[1]!), /The person chose option 1: Migrate now/);
});

test('escalate: auto_resolve_above resolves a confident recommendation by itself, recorded as such; a less confident one still asks', async (t) => {
  const s = setup(t, [{ tools: [{ name: 'escalate', input: { ...ESC, confidence: 0.9 } }] }, { tools: [{ name: 'escalate', input: { ...ESC, confidence: 0.7 } }] }], { escalation: { auto_resolve_above: 0.8 } });
  sendMessage(s.store, s.id, 'deploy');
  const r = await s.run();
  const evs = s.events();
  const auto = evs.find((e) => e.type === 'agent.tool_use' && e.name === 'escalate');
  assert.ok(auto, 'the confident escalation ran as an allowed tool use');
  const res = evs.find((e) => e.type === 'agent.tool_result' && e.tool_use_id === auto.id);
  assert.ok(res && res.type === 'agent.tool_result' && !res.is_error);
  assert.match(res.content[0]!.text, /^Resolved automatically to your recommendation, option 2: Wait for the weekend \(your confidence 0\.9 is above this agent's escalation\.auto_resolve_above; no person was asked\)/);
  assert.equal(r.stop_reason?.type, 'requires_action', 'the second, at 0.7, waits for a person');
  assert.equal(evs.filter((e) => e.type === 'agent.custom_tool_use').length, 1);
  assertEventsValid(evs);
});

test('escalate: an invalid call gets its error as its result at once; nobody is asked a malformed question', async (t) => {
  const s = setup(t, [{ tools: [{ name: 'escalate', input: { situation: 'x', options: ['only one'], confidence: 2 } }] }, { text: 'ok' }]);
  sendMessage(s.store, s.id, 'go');
  const r = await s.run();
  assert.equal(r.stop_reason?.type, 'end_turn');
  const res = s.events().find((e) => e.type === 'agent.tool_result');
  assert.ok(res && res.type === 'agent.tool_result' && res.is_error);
  assert.match(res.content[0]!.text, /invalid input for escalate: .*options/);
});

test('openboa resolve and status: the escalation with its options; --pick out of range exits 2 naming --pick', async (t) => {
  const s = setup(t, [{ tools: [{ name: 'escalate', input: ESC }] }]);
  sendMessage(s.store, s.id, 'deploy');
  await s.run();
  const use = s.events().find((e) => e.type === 'agent.custom_tool_use')!;
  const st = await cliInProcess(['status', s.id], { home: s.h.root });
  assert.equal(st.code, 0, st.stderr);
  assert.match(st.stdout, new RegExp(`${use.id}  escalation: The deploy needs a database migration`));
  assert.match(st.stdout, /1\. Migrate now\n\s+2\. Wait for the weekend  \(recommended\)\n\s+confidence 0\.6; answer: openboa resolve/);
  const js = JSON.parse((await cliInProcess(['status', s.id, '--json'], { home: s.h.root })).stdout);
  assert.deepEqual(js.requires_action[0].escalation.options, ESC.options);
  const bad = await cliInProcess(['resolve', s.id, use.id, '--pick', '3'], { home: s.h.root });
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--pick 3 is not an option of .*: it has 2, numbered 1 to 2/);
  const both = await cliInProcess(['resolve', s.id, use.id, '--pick', '1', '--message', 'x'], { home: s.h.root });
  assert.equal(both.code, 2);
  assert.match(both.stderr, /exactly one of --pick N or --message M/);
  const nan = await cliInProcess(['resolve', s.id, use.id, '--pick', 'two'], { home: s.h.root });
  assert.equal(nan.code, 2);
  assert.match(nan.stderr, /--pick "two" is not a whole number/);
  const ok = await cliInProcess(['resolve', s.id, use.id, '--pick', '2', '--json'], { home: s.h.root });
  assert.equal(ok.code, 0, ok.stderr);
  const ans = s.events().find((e) => e.type === 'user.custom_tool_result');
  assert.ok(ans && ans.type === 'user.custom_tool_result');
  assert.equal(ans.content?.[0]?.text, 'The person chose option 2: Wait for the weekend');
});

test("escalate: a recommendation given as an option's text (or 'option 2') is taken as its number; text naming no option is refused", async (t) => {
  const byText = { ...ESC, confidence: 0.9, recommendation: '  wait for the WEEKEND. ' };
  const byNumeral = { ...ESC, confidence: 0.9, recommendation: 'option 2' };
  const unknown = { ...ESC, confidence: 0.9, recommendation: 'Deploy on Friday evening' };
  const s = setup(t, [{ tools: [{ name: 'escalate', input: byText }, { name: 'escalate', input: byNumeral }, { name: 'escalate', input: unknown }] }, { text: 'ok' }], { escalation: { auto_resolve_above: 0.8 } });
  sendMessage(s.store, s.id, 'deploy');
  await s.run();
  const results = s.events().filter((e) => e.type === 'agent.tool_result');
  assert.equal(results.length, 3);
  const texts = results.map((r) => (r.type === 'agent.tool_result' ? r.content[0]!.text : ''));
  for (const text of texts.slice(0, 2)) assert.match(text, /^Resolved automatically to your recommendation, option 2: Wait for the weekend/);
  assert.ok(results[2]!.type === 'agent.tool_result' && results[2]!.is_error);
  assert.match(texts[2]!, /recommendation.*expected the number of one of the options \(1 to 2\) or one option's exact text, got "Deploy on Friday evening"/);
  assertEventsValid(s.events());
});
