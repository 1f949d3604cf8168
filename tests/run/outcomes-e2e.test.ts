/**
 * Outcomes end to end: the real @anthropic-ai/sdk against the scripted
 * Messages API server (the agent's replies and the grader's), the real
 * sandbox running the check in a fresh shell, the real store on a temp home,
 * the daemon for interrupts, and a manual clock. What tests/core/outcomes.test.ts
 * shows in-process (queued model, memory sandbox) is shown here through the
 * parts a deployment runs.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { bench, shellWorkspace, toolResults, writeAgent, NO_SHELL, type Bench } from '../helpers/run.js';
import { startDaemon } from '../helpers/daemon.js';
import { whenExists } from '../helpers/home.js';
import { validateLog } from '../helpers/event-schema.js';
import type { RecordedRequest, Step } from '../helpers/fake-anthropic.js';
import { defineOutcome } from '../../src/core/ops/session-ops.js';
import { outcomeIdOf, type SessionEvent } from '../../src/core/schema/index.js';
import { HEARTBEAT_MS } from '../../src/core/run/outcome-grading.js';
import { KILL_GRACE_MS } from '../../src/core/sandbox/pty-shell.js';
import { CHECK_TAIL_CHARS } from '../../src/core/run/graders.js';

const grade = (result: string, explanation: string): Step => ({ toolUses: [{ name: 'grade_outcome', input: { result, explanation } }] });
const ends = (evs: SessionEvent[]) => evs.flatMap((e) => (e.type === 'span.outcome_evaluation_end' ? [[e.iteration, e.result]] : []));
const isGrader = (r: RecordedRequest) => (r.raw as { tool_choice?: unknown }).tool_choice !== undefined;
const graderRequests = (b: Bench) => b.fake.requests.filter(isGrader);
const agentRequests = (b: Bench) => b.fake.requests.filter((r) => !isGrader(r));
/** The text of a request's last (user) message. */
const lastUserText = (r: RecordedRequest) => JSON.stringify(r.body.messages[r.body.messages.length - 1]!.content);
const sessionJson = (b: Bench, id: string) => JSON.parse(fs.readFileSync(b.store.paths(id).snapshot, 'utf8'));

/**
 * Every event of the log against the SDK's schema: all the runtime's, and
 * the user.define_outcome lines that carry a rubric (one without a rubric is
 * our extension: the SDK's echo requires it). "line N: error" strings, and
 * how many define_outcome lines were checked.
 */
function schemaCheck(b: Bench, id: string): { errors: string[]; defines: number } {
  const { errors, alsoChecked } = validateLog(b.store.paths(id).events, { also: (e) => e.type === 'user.define_outcome' && e.rubric !== undefined });
  return { errors, defines: alsoChecked };
}
const schemaErrors = (b: Bench, id: string) => schemaCheck(b, id).errors;

test('a failing check reaches the agent with its exit code and output; the revision passes it; the check does not see the agent\'s shell', { skip: NO_SHELL }, async (t) => {
  const b = await bench(t, {
    steps: [
      // The first try writes the wrong text, and leaves a variable in the agent's shell.
      { toolUses: [{ name: 'write', input: { file_path: '/workspace/out.txt', content: 'not yet\n' } }, { name: 'bash', input: { command: 'export OB_AGENT_MARK=agent-shell-state' } }] },
      { toolUses: [{ id: 'toolu_echo', name: 'bash', input: { command: 'echo "agent sees [$OB_AGENT_MARK]"' } }] },
      { text: 'I wrote out.txt.' },
      { toolUses: [{ name: 'write', input: { file_path: '/workspace/out.txt', content: 'done\n' } }] },
      { text: 'Fixed: out.txt now says done.' },
    ],
  });
  const id = b.session();
  const ws = shellWorkspace(b, id);
  const check = `echo "check sees [$OB_AGENT_MARK]"; grep -q done ${ws}/out.txt || { echo 'out.txt lacks done'; exit 3; }`;
  const def = defineOutcome(b.store, id, { description: 'write out.txt saying done', check });
  const r = await b.wake(id);
  assert.deepEqual(r.stop_reason, { type: 'end_turn' });
  assert.equal(b.fake.unexpected, 0);
  assert.equal(b.fake.requests.length, 5, 'five agent requests; a check alone asks no grader');
  assert.equal(graderRequests(b).length, 0);
  // The variable is there in the agent's own shell…
  assert.match(toolResults(b.fake.requests[2]!).get('toolu_echo')!.text, /agent sees \[agent-shell-state\]/);
  const evs = b.events(id);
  assert.deepEqual(ends(evs), [[0, 'needs_revision'], [1, 'satisfied']]);
  const [first, second] = evs.filter((e) => e.type === 'span.outcome_evaluation_end');
  assert.ok(first?.type === 'span.outcome_evaluation_end' && second?.type === 'span.outcome_evaluation_end');
  // …but not in the check's: it runs in a shell of its own.
  assert.match(first.explanation, /exited 3\./);
  assert.match(first.explanation, /check sees \[\]\nout\.txt lacks done/);
  assert.doesNotMatch(first.explanation, /agent-shell-state/);
  assert.match(second.explanation, /Check passed: .* exited 0\./);
  // The failure is the agent's next user turn, word for word.
  const revision = lastUserText(b.fake.requests[3]!);
  assert.match(revision, new RegExp(`outcome ${outcomeIdOf(def.id)}, evaluation 1: needs_revision`));
  assert.match(revision, /exited 3\.\\ncheck sees \[\]\\nout\.txt lacks done/);
  assert.equal(fs.readFileSync(`${b.store.paths(id).workspace}/out.txt`, 'utf8'), 'done\n');
  const snap = b.store.snapshot(id);
  assert.equal(snap.outcome, null);
  assert.deepEqual(sessionJson(b, id).outcome_evaluations.map((x: { outcome_id: string; result: string; iteration: number }) => [x.outcome_id, x.result, x.iteration]), [[outcomeIdOf(def.id), 'satisfied', 1]]);
  const outcomeFile = JSON.parse(fs.readFileSync(`${b.store.paths(id).runtime}/outcome.json`, 'utf8'));
  assert.equal(outcomeFile.outcome, null);
  assert.equal(outcomeFile.outcome_evaluations.at(-1).result, 'satisfied');
  assert.deepEqual(schemaErrors(b, id), []);
});

test('a failing check\'s explanation is the exit code and the tail of stdout and stderr together, bounded and redacted', { skip: NO_SHELL }, async (t) => {
  const SECRET = 'sk-test-check-0123456789-secret';
  const b = await bench(t, { steps: [{ text: 'v1' }, { text: 'v2' }, { text: 'I could not make it pass.' }], env: { OPENBOA_TEST_SECRET: SECRET } });
  b.h.write('environments/secret.yaml', 'env:\n  API_TOKEN: { secret: { env: OPENBOA_TEST_SECRET } }\n');
  writeAgent(b.h, 'test', { environment: 'secret' });
  const id = b.session();
  const ws = shellWorkspace(b, id);
  // The first run floods stdout (far past the bound) and fails; the second says why on stderr only, with the secret.
  const check = `if [ -e ${ws}/ran ]; then echo "token=$API_TOKEN: STDERR_ONLY" >&2; exit 4; fi; echo > ${ws}/ran; printf 'HEAD%sMARK\\n' _; seq 100000 103000; exit 2`;
  defineOutcome(b.store, id, { description: 'x', check, maxIterations: 2 });
  const r = await b.wake(id);
  assert.deepEqual(r.stop_reason, { type: 'end_turn' });
  assert.equal(b.fake.unexpected, 0);
  const evs = b.events(id).flatMap((e) => (e.type === 'span.outcome_evaluation_end' ? [e] : []));
  assert.deepEqual(evs.map((e) => [e.iteration, e.result]), [[0, 'needs_revision'], [1, 'max_iterations_reached']]);
  const [flood, quiet] = evs.map((e) => e.explanation);
  assert.match(flood!, /^Check failed: `[^`]+` exited 2\.\n…/);
  assert.match(flood!, /\n103000$/, 'the tail of the output is kept');
  assert.doesNotMatch(flood!, /HEAD_MARK/, 'the head is cut');
  assert.ok(flood!.length < CHECK_TAIL_CHARS + 500, `bounded: ${flood!.length} characters`);
  assert.match(quiet!, /exited 4\.\ntoken=\[REDACTED:API_TOKEN\]: STDERR_ONLY$/, 'stderr is in the explanation, its secret redacted');
  const everything = JSON.stringify(b.fake.requests.map((q) => q.body)) + fs.readFileSync(b.store.paths(id).events, 'utf8') + fs.readFileSync(b.store.paths(id).snapshot, 'utf8');
  assert.ok(!everything.includes(SECRET), 'the secret reaches neither the model, the log nor session.json');
  assert.match(lastUserText(b.fake.requests[2]!), /STDERR_ONLY/, 'the agent reads it');
  assert.deepEqual(schemaErrors(b, id), []);
});

test('a check runs under the bash timeout (shell.timeout_seconds): one that does not finish is killed and fails', { skip: NO_SHELL }, async (t) => {
  const b = await bench(t, { steps: [{ text: 'done' }, { text: 'The check was too slow; that is where things stand.' }] });
  b.h.write('environments/quick.yaml', 'shell: { timeout_seconds: 2 }\n');
  writeAgent(b.h, 'test', { environment: 'quick' });
  const id = b.session();
  const ws = shellWorkspace(b, id);
  defineOutcome(b.store, id, { description: 'x', check: `echo SLOW_CHECK; echo started > ${ws}/checking; sleep 600`, maxIterations: 1 });
  const running = b.wake(id);
  await whenExists(`${b.store.paths(id).workspace}/checking`);
  // The timeout is a timer of the run's (manual) clock, armed for the environment's timeout.
  await b.deps.clock.armed(2000);
  await b.deps.clock.advance(2000);
  const r = await running;
  assert.deepEqual(r.stop_reason, { type: 'end_turn' }, JSON.stringify({ r, evs: b.events(id).map((e) => e.type) }));
  const end = b.events(id).find((e) => e.type === 'span.outcome_evaluation_end');
  assert.ok(end?.type === 'span.outcome_evaluation_end');
  assert.equal(end.result, 'max_iterations_reached');
  // The output read before the kill is its tail; whether the terminal had handed SLOW_CHECK over by the
  // instant the file appeared is the kernel's timing, so either form is the right explanation.
  assert.match(end.explanation, /^Check failed: `[^`]+` did not finish within 2 s and was killed\.(\nSLOW_CHECK| \(no output\))$/);
  assert.deepEqual(schemaErrors(b, id), []);
});

test('the rubric grader is one forced grade_outcome request with the rubric and the final message, never the agent\'s tool traffic', { skip: NO_SHELL }, async (t) => {
  const b = await bench(t, {
    steps: [
      { toolUses: [{ name: 'bash', input: { command: 'echo ZQX_TOOL_TRAFFIC_7731 && echo HAIKU_FILE_BODY > haiku.txt' } }] },
      { text: 'Haiku v1: one two three' },
      grade('needs_revision', 'criterion 2: no season word'),
      { text: 'Haiku v2: autumn leaves drift down' },
      grade('satisfied', 'every criterion is met'),
    ],
  });
  const id = b.session();
  // A check that passes leaves the verdict to the rubric grader, which is told how the check went.
  const def = defineOutcome(b.store, id, { description: 'write a haiku', rubric: '1. three lines\n2. a season word (RUBRIC_MARK)', check: 'true', files: ['/workspace/haiku.txt'] });
  const r = await b.wake(id);
  assert.deepEqual(r.stop_reason, { type: 'end_turn' });
  assert.equal(b.fake.unexpected, 0);
  assert.deepEqual(ends(b.events(id)), [[0, 'needs_revision'], [1, 'satisfied']]);
  // The agent's tool traffic really happened (and went to the agent's model).
  assert.match(JSON.stringify(agentRequests(b)[1]!.body.messages), /ZQX_TOOL_TRAFFIC_7731/);
  const graders = graderRequests(b);
  assert.equal(graders.length, 2);
  for (const g of graders) {
    const raw = g.raw as RecordedRequest['body'] & { tool_choice?: unknown };
    assert.deepEqual(raw.tool_choice, { type: 'tool', name: 'grade_outcome' });
    assert.deepEqual(raw.tools?.map((x) => x.name), ['grade_outcome']);
    assert.equal(g.body.messages.length, 1, 'a context of its own: one user turn');
    const sent = JSON.stringify(g.raw.messages) + JSON.stringify(g.raw.system);
    assert.match(sent, /RUBRIC_MARK/);
    assert.match(sent, /write a haiku/);
    assert.doesNotMatch(sent, /ZQX_TOOL_TRAFFIC_7731|tool_use|tool_result|"echo /);
    assert.match(sent, /<check-(\w+)>\\nCheck passed: `true` exited 0\.\\n<\/check-\1>/);
    assert.match(sent, /<file-\w+ path=\\"\/workspace\/haiku\.txt\\">\\nHAIKU_FILE_BODY/);
  }
  assert.match(JSON.stringify(graders[0]!.body.messages), /<final_message-(\w+)>\\nHaiku v1: one two three\\n<\/final_message-\1>/);
  assert.doesNotMatch(JSON.stringify(graders[1]!.body.messages), /one two three/, 'the second grading sees the second iteration\'s message');
  assert.match(JSON.stringify(graders[1]!.body.messages), /autumn leaves drift down/);
  // The grader's explanation is the agent's next user turn.
  assert.match(lastUserText(agentRequests(b)[2]!), /evaluation 1: needs_revision\]\\nCheck passed[^"]*\\ncriterion 2: no season word/);
  const list = sessionJson(b, id).outcome_evaluations;
  assert.deepEqual(list.map((x: { outcome_id: string; result: string }) => [x.outcome_id, x.result]), [[outcomeIdOf(def.id), 'satisfied']]);
  // The grader's usage is counted in the evaluation's end.
  const end = b.events(id).find((e) => e.type === 'span.outcome_evaluation_end');
  assert.equal(end?.type === 'span.outcome_evaluation_end' && end.usage.input_tokens, 10);
  // Checked against the SDK's schema: the define_outcome line too (its check and files are our extensions).
  assert.deepEqual(schemaCheck(b, id), { errors: [], defines: 1 });
});

test('max_iterations 2: needs_revision, then max_iterations_reached, one acknowledging turn, then idle', async (t) => {
  const b = await bench(t, {
    steps: [{ text: 'v1' }, grade('needs_revision', 'not yet'), { text: 'v2' }, grade('needs_revision', 'still not'), { text: 'I could not meet criterion 1.' }],
  });
  const id = b.session();
  defineOutcome(b.store, id, { description: 'x', rubric: '1. be perfect', maxIterations: 2 });
  const r = await b.wake(id);
  assert.deepEqual(r.stop_reason, { type: 'end_turn' });
  assert.equal(r.status, 'idle');
  assert.equal(b.fake.unexpected, 0, 'no request beyond the script');
  assert.equal(b.fake.requests.length, 5);
  assert.deepEqual(ends(b.events(id)), [[0, 'needs_revision'], [1, 'max_iterations_reached']]);
  assert.equal(graderRequests(b).length, 2, 'no third evaluation');
  const ack = agentRequests(b)[2]!;
  assert.match(lastUserText(ack), /evaluation 2: max_iterations_reached\]\\nstill not\\nNo evaluations are left/);
  const evs = b.events(id);
  assert.equal(evs[evs.length - 1]!.type, 'session.status_idle');
  assert.equal(evs.filter((e) => e.type === 'agent.message').length, 3);
  const entry = sessionJson(b, id).outcome_evaluations[0];
  assert.equal(entry.result, 'max_iterations_reached');
  assert.equal(entry.iteration, 1);
  assert.ok(entry.completed_at);
  assert.equal(b.store.snapshot(id).status, 'idle');
  assert.deepEqual(schemaErrors(b, id), []);
});

test('failed: the grader finds the rubric does not fit; the session idles with no further agent turn', async (t) => {
  const b = await bench(t, { steps: [{ text: 'a poem about the sea' }, grade('failed', 'the rubric is about code; this is a poem')] });
  const id = b.session();
  defineOutcome(b.store, id, { description: 'x', rubric: 'compiles without warnings', maxIterations: 5 });
  const r = await b.wake(id);
  assert.deepEqual(r.stop_reason, { type: 'end_turn' });
  assert.equal(b.fake.requests.length, 2);
  assert.equal(b.fake.unexpected, 0);
  assert.deepEqual(ends(b.events(id)), [[0, 'failed']]);
  const entry = sessionJson(b, id).outcome_evaluations[0];
  assert.equal(entry.result, 'failed');
  assert.equal(entry.explanation, 'the rubric is about code; this is a poem');
  assert.equal(b.store.snapshot(id).outcome, null);
  assert.deepEqual(schemaErrors(b, id), []);
});

test('an outcome replaced mid-way ends interrupted ("replaced by …") in session.json; the new one is graded', async (t) => {
  // One agent request per run: the first outcome's revision is carried into a follow-up run, and the
  // new outcome is defined before that run takes it in.
  const b = await bench(t, {
    agent: { limits: { max_model_requests_per_wake: 1 } },
    steps: [{ text: 'first try' }, grade('needs_revision', 'more'), { text: 'on the second outcome' }, grade('satisfied', 'ok')],
  });
  const id = b.session();
  const a = defineOutcome(b.store, id, { description: 'first outcome', rubric: 'r1', maxIterations: 5 });
  const r1 = await b.wake(id);
  assert.deepEqual(ends(b.events(id)), [[0, 'needs_revision']]);
  assert.equal(r1.wakes_scheduled.length, 1, 'the revision waits for a follow-up run');
  assert.equal(sessionJson(b, id).outcome_evaluations[0].result, 'running');
  const c = defineOutcome(b.store, id, { description: 'second outcome', rubric: 'r2' });
  const r2 = await b.wake(id);
  assert.deepEqual(r2.stop_reason, { type: 'end_turn' });
  assert.equal(b.fake.unexpected, 0);
  const list = sessionJson(b, id).outcome_evaluations;
  assert.deepEqual(list.map((x: { outcome_id: string; result: string }) => [x.outcome_id, x.result]), [
    [outcomeIdOf(a.id), 'interrupted'],
    [outcomeIdOf(c.id), 'satisfied'],
  ]);
  assert.equal(list[0].explanation, `replaced by ${outcomeIdOf(c.id)}`);
  assert.ok(list[0].completed_at);
  const evEnds = b.events(id).filter((e) => e.type === 'span.outcome_evaluation_end');
  assert.deepEqual(evEnds.map((e) => e.type === 'span.outcome_evaluation_end' && [e.outcome_id, e.result]), [
    [outcomeIdOf(a.id), 'needs_revision'],
    [outcomeIdOf(c.id), 'satisfied'],
  ]);
  // The second grading is of the second outcome.
  assert.match(JSON.stringify(graderRequests(b)[1]!.body.messages), /second outcome[\s\S]*r2/);
  assert.deepEqual(schemaErrors(b, id), []);
});

test('the daemon: an interrupt during a `sleep 60` check ends the evaluation interrupted and the session idle', { skip: NO_SHELL }, async (t) => {
  const b = await bench(t, { steps: [{ text: 'done, check it' }] });
  const id = b.session();
  const ws = shellWorkspace(b, id);
  defineOutcome(b.store, id, { description: 'x', check: `echo > ${ws}/checking; sleep 60` });
  const td = await startDaemon(t, b);
  await whenExists(`${b.store.paths(id).workspace}/checking`); // the check runs in the sandbox
  const t0 = Date.now();
  const ended = td.result((x) => x.session_id === id && x.outcome === 'executed' && x.status === 'idle');
  // The shell's kill grace runs on the manual clock: let it pass once an interrupt armed it.
  void b.deps.clock.armed(KILL_GRACE_MS).then(() => b.deps.clock.advance(KILL_GRACE_MS));
  fs.appendFileSync(b.store.paths(id).events, '{"type":"user.interrupt","reason":"stop grading"}\n');
  const r = await ended;
  assert.ok(Date.now() - t0 < 10_000, `idle after ${Date.now() - t0} ms`);
  assert.deepEqual(r.stop_reason, { type: 'end_turn' });
  const evs = b.events(id);
  assert.deepEqual(ends(evs), [[0, 'interrupted']]);
  const end = evs.find((e) => e.type === 'span.outcome_evaluation_end');
  assert.match(end?.type === 'span.outcome_evaluation_end' ? end.explanation : '', /interrupted/);
  assert.equal(sessionJson(b, id).outcome_evaluations[0].result, 'interrupted');
  assert.equal(b.store.snapshot(id).status, 'idle');
  assert.equal(b.store.snapshot(id).outcome, null);
  assert.equal(b.store.snapshot(id).pending_events.length, 0, 'the interrupt was taken in');
  assert.equal(b.fake.requests.length, 1, 'no model request after the interrupt');
  assert.deepEqual(schemaErrors(b, id), []);
});

test('the daemon: an interrupt during a hanging grader request aborts it; heartbeats came on the clock; interrupted, idle', async (t) => {
  const b = await bench(t, { steps: [{ text: 'my answer' }, { hang: true }] });
  const id = b.session();
  defineOutcome(b.store, id, { description: 'x', rubric: 'y' });
  const td = await startDaemon(t, b);
  await b.fake.waitForRequests(2);
  assert.ok(isGrader(b.fake.requests[1]!));
  // While the grader hangs, a heartbeat on the clock.
  await b.deps.clock.armed(HEARTBEAT_MS);
  await b.deps.clock.advance(HEARTBEAT_MS);
  const ended = td.result((x) => x.session_id === id && x.outcome === 'executed' && x.status === 'idle');
  fs.appendFileSync(b.store.paths(id).events, '{"type":"user.interrupt"}\n');
  const r = await ended;
  assert.deepEqual(r.stop_reason, { type: 'end_turn' });
  await b.fake.closed(1);
  assert.equal(b.fake.requests[1]!.aborted, true, 'the grader\'s HTTP request was aborted');
  const evs = b.events(id);
  assert.deepEqual(ends(evs), [[0, 'interrupted']]);
  assert.ok(evs.some((e) => e.type === 'span.outcome_evaluation_ongoing'), 'a heartbeat while grading');
  assert.equal(sessionJson(b, id).outcome_evaluations[0].result, 'interrupted');
  assert.equal(b.store.snapshot(id).status, 'idle');
  assert.equal(b.fake.requests.length, 2);
  assert.deepEqual(schemaErrors(b, id), []);
});

test('bad hand-written define_outcome lines: each a session.error naming its field, the line kept; the good ones run', async (t) => {
  const b = await bench(t, { steps: [{ text: 'answered' }, grade('satisfied', 'fine')] });
  const id = b.session();
  const file = b.store.paths(id).events;
  const bad = [
    ['max_iterations', { type: 'user.define_outcome', description: 'd', rubric: 'r', max_iterations: 0 }],
    ['files', { type: 'user.define_outcome', description: 'd', rubric: 'r', files: Array.from({ length: 21 }, (_, i) => `f${i}.txt`) }],
    ['check', { type: 'user.define_outcome', description: 'd', check: '' }],
    ['rubric', { type: 'user.define_outcome', description: 'd', rubric: '' }],
    ['description', { type: 'user.define_outcome', description: '', rubric: 'r' }],
  ] as const;
  const good = { type: 'user.define_outcome', description: 'hand-written outcome', rubric: { type: 'text', content: 'HAND_RUBRIC' } };
  fs.appendFileSync(file, [...bad.map(([, l]) => JSON.stringify(l)), JSON.stringify(good), '{"type":"user.message","content":"and a message"}'].join('\n') + '\n');
  const before = fs.readFileSync(file, 'utf8');
  const r = await b.wake(id);
  assert.deepEqual(r.stop_reason, { type: 'end_turn' });
  assert.equal(b.fake.unexpected, 0);
  const errs = b.events(id).flatMap((e) => (e.type === 'session.error' ? [e] : []));
  assert.deepEqual(errs.map((e) => e.line), [2, 3, 4, 5, 6]);
  errs.forEach((e, i) => {
    assert.equal(e.error.code, 'invalid_event');
    assert.match(e.error.message, new RegExp(`line ${i + 2}: user\\.define_outcome: ${bad[i]![0]}`), e.error.message);
  });
  // The bad lines stay in the log as written.
  assert.ok(fs.readFileSync(file, 'utf8').startsWith(before));
  // The session went on: the good outcome and the message were taken in together, the agent answered, the grader graded.
  const list = sessionJson(b, id).outcome_evaluations;
  assert.deepEqual(list.map((x: { description: string; result: string }) => [x.description, x.result]), [['hand-written outcome', 'satisfied']]);
  const asked = JSON.stringify(b.fake.requests[0]!.body.messages);
  assert.match(asked, /HAND_RUBRIC[\s\S]*and a message/);
  assert.match(JSON.stringify(graderRequests(b)[0]!.body.messages), /HAND_RUBRIC/);
  // A second run reports nothing again.
  assert.equal((await b.wake(id)).outcome, 'skipped');
  assert.equal(b.events(id).filter((e) => e.type === 'session.error').length, 5);
  assert.deepEqual(validateLog(file).errors, []);
});
