/**
 * Guards and escalation end to end: the real @anthropic-ai/sdk against the
 * scripted Messages API server, the real store and loop, and the CLI
 * (in process) answering the escalation.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import YAML from 'yaml';
import { bench, toolResults } from '../helpers/run.js';
import { cliInProcess } from '../helpers/cli.js';
import { validateLog } from '../helpers/event-schema.js';
import type { RecordedRequest } from '../helpers/fake-anthropic.js';

/** What the Messages API requires of the turns: roles alternate, and every tool_use is answered in the next message. */
function assertValid(body: RecordedRequest['body']) {
  const msgs = body.messages;
  msgs.forEach((m, i) => {
    if (i > 0) assert.notEqual(m.role, msgs[i - 1]!.role, `message ${i} repeats the role`);
    if (m.role !== 'assistant' || typeof m.content === 'string') return;
    const uses = m.content.filter((b) => b.type === 'tool_use').map((b) => b.id);
    if (!uses.length) return;
    const next = msgs[i + 1];
    assert.ok(next && next.role === 'user' && Array.isArray(next.content), `message ${i}: its tool uses have no answer`);
    const answered = new Set(next.content.filter((b) => b.type === 'tool_result').map((b) => b.tool_use_id));
    for (const u of uses) assert.ok(answered.has(u), `tool_use ${String(u)} is not answered in the next message`);
  });
}

test('end to end: a premature intent reminded, a stale loop escalated by the runtime and answered with openboa resolve --pick; then the agent escalates and is answered with --message', async (t) => {
  const b = await bench(t, {
    steps: [
      { text: "I'll check the logs." }, // 1: premature intent → reminded
      { text: 'Nothing to check, really.' }, // 2: replan nudge (replan_at 2)
      { text: 'Still no plan.' }, // 3: escalation (escalate_at 3)
      { text: 'Understood, stopping.', toolUses: [{ name: 'escalate', input: { situation: 'Stop for good?', options: ['Yes', 'No'], confidence: 0.3 } }] },
      { text: 'Will do.' },
    ],
  });
  b.h.write('agents/test/agent.yaml', YAML.stringify({ provider: 'anthropic', model: 'fake-model', system: 'You are a test agent.', environment: 'local', guards: { stale_loop: { replan_at: 2, escalate_at: 3 } } }));
  const id = b.session('look into the failure');
  const r1 = await b.wake(id);
  assert.equal(r1.stop_reason?.type, 'requires_action');
  assert.equal(b.fake.requests.length, 3);
  assert.match(JSON.stringify(b.fake.requests[1]!.body.messages.at(-1)), /premature_intent guard/);
  assert.match(JSON.stringify(b.fake.requests[2]!.body.messages.at(-1)), /stale_loop guard: that is 2 replies in a row without progress/);
  const evs = b.events(id);
  const esc = evs.find((e) => e.type === 'agent.custom_tool_use');
  assert.ok(esc && esc.type === 'agent.custom_tool_use' && esc.name === 'escalate');
  assert.deepEqual(evs.flatMap((e) => (e.type === 'session.guard' ? [`${e.guard}:${e.action}`] : [])), ['premature_intent:remind', 'stale_loop:replan', 'stale_loop:escalate']);

  const st = await cliInProcess(['status', id], { home: b.h.root });
  assert.match(st.stdout, /1\. Go on, with a different approach/);
  const res = await cliInProcess(['resolve', id, esc.id, '--pick', '2'], { home: b.h.root });
  assert.equal(res.code, 0, res.stderr);
  const r2 = await b.wake(id);
  assert.equal(r2.stop_reason?.type, 'requires_action');
  const req = b.fake.requests[3]!;
  assertValid(req.raw);
  const answer = toolResults(req).get(esc.model_tool_use_id);
  assert.match(answer?.text ?? '', /^The person chose option 2: Stop: the agent ends this task here/);
  // The run before asked with the same turns: this request extends it (the prompt cache).
  const prev = b.fake.requests[2]!.raw.messages;
  assert.deepEqual(req.raw.messages.slice(0, prev.length - 1), prev.slice(0, -1));

  const own = b.events(id).filter((e) => e.type === 'agent.custom_tool_use').at(-1)!;
  assert.notEqual(own.id, esc.id);
  assert.equal((await cliInProcess(['resolve', id, own.id, '--message', 'no, keep going tomorrow'], { home: b.h.root })).code, 0);
  const r3 = await b.wake(id);
  assert.equal(r3.stop_reason?.type, 'end_turn');
  const last = b.fake.requests[4]!;
  assertValid(last.raw);
  assert.match([...toolResults(last).values()][0]?.text ?? '', /^The person answered: no, keep going tomorrow/);
  for (const q of b.fake.requests) assertValid(q.raw);
  assert.deepEqual(validateLog(b.store.paths(id).events).errors, []);
});
