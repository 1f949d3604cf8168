/**
 * Delegation through the real daemon: a parent (`boss`, `delegates:
 * [worker]`) spawns children on the scripted Messages API server; the
 * daemon wakes each child, then the parent on each report (trigger
 * `child`). Every report is taken in exactly once, also across a kill -9 of
 * a real daemon process; the parent's tree_usage costs the whole tree; every
 * line of every log is a Managed Agents event (or one of ours).
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import YAML from 'yaml';
import { bench, textOf, type Bench } from '../helpers/run.js';
import { startDaemon } from '../helpers/daemon.js';
import { spawnDaemon } from '../helpers/daemon-process.js';
import { cliInProcess } from '../helpers/cli.js';
import { tempHome, whenExists, type TempHome } from '../helpers/home.js';
import { startFakeAnthropic, type FakeAnthropic, type RecordedRequest, type Step } from '../helpers/fake-anthropic.js';
import { validateLog } from '../helpers/event-schema.js';
import { SessionStore } from '../../src/core/store/session-store.js';
import { createSession } from '../../src/core/ops/create-session.js';
import { sendMessage } from '../../src/core/ops/session-ops.js';
import { systemDeps } from '../../src/core/foundation/deps.js';
import { wake } from '../../src/core/run/wake.js';
import type { Runtime } from '../../src/core/run/run-context.js';

/** Priced in data/pricing.json: USD per million tokens. */
const MODEL = 'claude-haiku-4-5';
const PRICE = { input: 1, output: 5, cache_write: 1.25, cache_read: 0.1 };
const USAGE = { input_tokens: 1200, output_tokens: 340, cache_creation_input_tokens: 500, cache_read_input_tokens: 7000 };
const REQUEST_COST = (USAGE.input_tokens * PRICE.input + USAGE.output_tokens * PRICE.output + USAGE.cache_creation_input_tokens * PRICE.cache_write + USAGE.cache_read_input_tokens * PRICE.cache_read) / 1e6;

function writeAgents(h: TempHome) {
  h.write('agents/boss/agent.yaml', YAML.stringify({ provider: 'anthropic', model: MODEL, system: 'You are boss.', environment: 'local', delegates: ['worker'] }));
  h.write('agents/worker/agent.yaml', YAML.stringify({ provider: 'anthropic', model: MODEL, system: 'You are worker.', environment: 'local' }));
}

const spawn = (...tasks: string[]): Step => ({ toolUses: tasks.map((task) => ({ name: 'spawn_session', input: { agent: 'worker', message: task, title: task.slice(0, 6) } })), usage: USAGE });
const say = (text: string): Step => ({ text, usage: USAGE });

type Line = Record<string, any>;
const readLog = (file: string): Line[] => fs.readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
const systemOf = (r: RecordedRequest) => String(r.body.system ?? '');
const isBoss = (r: RecordedRequest) => systemOf(r).includes('You are boss.');
const isWorker = (r: RecordedRequest) => systemOf(r).includes('You are worker.');
/** The text of every block of a request's messages, in order. */
const textsOf = (r: RecordedRequest) => r.body.messages.flatMap((m) => (Array.isArray(m.content) ? m.content.map((b) => (b.type === 'text' ? String(b.text) : b.type === 'tool_result' ? textOf(b.content) : '')) : [String(m.content)]));
const reportText = (child: string, answer: string) => `[child session ${child} (agent worker) reports; its words, quoted:]\n> ${answer}`;

/** The ids of the events the session's runs took in (first records and mid-run continuations), each as often as it was taken. */
const takenIn = (log: Line[]) => log.filter((e) => e.type === 'session.status_running').flatMap((e) => e.processed_event_ids as string[]);

/** The first run id of each of the child's runs, and the last (whose report counts). */
const runsOf = (log: Line[]) => log.filter((e) => e.type === 'session.status_running' && !e.continuation).map((e) => e.wake_id as string);

/**
 * One child's report, as the parent's log holds it: the lines with its run's
 * delivery key (a repeat may be there too) and how many of them the parent's
 * runs took in. Exactly once: one message and one idle taken in.
 */
function reportIn(parentLog: Line[], childRun: string) {
  const key = `run:${childRun}`;
  const lines = parentLog.filter((e) => e.delivery_key === key);
  const taken = takenIn(parentLog);
  const takenOf = (type: string) => lines.filter((e) => e.type === type).reduce((n, e) => n + taken.filter((id) => id === e.id).length, 0);
  return { lines, messagesTaken: takenOf('agent.thread_message_received'), idlesTaken: takenOf('session.thread_status_idle') };
}

function assertLogsValid(files: string[]) {
  for (const f of files) assert.deepEqual(validateLog(f).errors, [], f);
}

async function tree(t: TestContext, steps: Step[]): Promise<Bench> {
  const b = await bench(t, { steps });
  writeAgents(b.h);
  return b;
}

test('a parent spawns two children in one reply: the daemon runs each, then the parent on their reports, each taken in once', { timeout: 30_000 }, async (t) => {
  // Children run concurrently, so which request gets which step is not fixed; every step after the
  // first is a distinct text, and the test reads who got which from the requests themselves.
  const b = await tree(t, [spawn('task A: count the apples', 'task B: count the pears'), ...Array.from({ length: 8 }, (_, i) => say(`answer #${i + 1}`))]);
  const parent = b.session('split the work between two workers', 'boss');
  const td = await startDaemon(t, b, { concurrency: 4 });
  const kidsOf = () => Object.entries(b.store.snapshot(parent, { persist: false }).children);
  await td.until(() => {
    const s = b.store.snapshot(parent, { persist: false });
    const kids = Object.values(s.children);
    return kids.length === 2 && kids.every((k) => k.last_report_run !== null) && s.status === 'idle' && s.pending_events.length === 0;
  });
  assert.equal(b.fake.unexpected, 0);
  const kids = kidsOf().map(([id]) => id);
  const parentLog = readLog(b.store.paths(parent).events);
  const results = td.d.results.filter((r) => r.outcome === 'executed');

  // Each child ran once, on its task, and answered with the step its request got.
  for (const child of kids) {
    const childLog = readLog(b.store.paths(child).events);
    const runs = results.filter((r) => r.session_id === child);
    assert.deepEqual(runs.map((r) => [r.trigger, r.stop_reason?.type]), [['event', 'end_turn']], `child ${child} ran once`);
    assert.equal(childLog[0]!.type, 'session.created');
    assert.equal(childLog[0]!.parent_session_id, parent);
    assert.equal(childLog[0]!.depth, 1);
    const myTask = childLog.find((e) => e.type === 'user.message')!.content[0].text as string;
    const reqIdx = b.fake.requests.findIndex((r) => isWorker(r) && textsOf(r).includes(myTask));
    assert.ok(reqIdx > 0, `the request of child ${child} was sent`);
    assert.equal(b.fake.requests.filter((r) => isWorker(r) && textsOf(r).includes(myTask)).length, 1);
    const answer = `answer #${reqIdx}`;
    assert.equal(childLog.filter((e) => e.type === 'agent.message').map((e) => e.content[0].text).join('|'), answer);

    // Its report reached the parent once, and the parent's model read it in a later request, once.
    const rep = reportIn(parentLog, runs[0]!.wake_id!);
    assert.deepEqual(rep.lines.map((e) => e.type), ['agent.thread_message_received', 'session.thread_status_idle']);
    assert.equal(rep.lines[0]!.content[0].text, answer);
    assert.equal(rep.messagesTaken, 1, 'the report message is taken in once');
    assert.equal(rep.idlesTaken, 1, 'the report idle is taken in once');
    const reading = b.fake.requests.findIndex((r, k) => k > reqIdx && isBoss(r) && textsOf(r).includes(reportText(child, answer)));
    assert.ok(reading > reqIdx, `a later request of the parent reads child ${child}'s answer`);
    const last = b.fake.requests.filter(isBoss).at(-1)!;
    assert.equal(textsOf(last).filter((x) => x === reportText(child, answer)).length, 1, 'the conversation holds each report once');
    assert.equal(textsOf(last).filter((x) => x === `[child session ${child} (agent worker) is idle: end_turn]`).length, 1);
  }
  assert.deepEqual(kids.map((k) => readLog(b.store.paths(k).events).find((e) => e.type === 'user.message')!.content[0].text).sort(), ['task A: count the apples', 'task B: count the pears']);

  // The parent: its first run spawned both (one reply, two tool uses); every later run was woken by a report.
  const parentRuns = results.filter((r) => r.session_id === parent);
  assert.equal(parentRuns[0]!.trigger, 'event');
  assert.ok(parentRuns.length >= 2 && parentRuns.length <= 3, `the parent ran ${parentRuns.length} times`);
  for (const r of parentRuns.slice(1)) assert.equal(r.trigger, 'child');
  assert.equal(parentLog.filter((e) => e.type === 'session.thread_created').length, 2);
  const snap = b.store.snapshot(parent, { persist: false });
  for (const k of kids) assert.deepEqual([snap.children[k]!.agent, snap.children[k]!.status, snap.children[k]!.depth], ['worker', 'end_turn', 1]);
  assertLogsValid([parent, ...kids].map((id) => b.store.paths(id).events));
});

test('a child\'s report takes the run slot it frees: with one slot and siblings waiting, the parent runs right after each child', { timeout: 30_000 }, async (t) => {
  const b = await tree(t, Array.from({ length: 6 }, (_, i) => say(`answer ${i}`)));
  const parent = createSession(b.store, { agent: 'boss', title: 'parent' }).id;
  const kids = [0, 1, 2].map((i) => createSession(b.store, { agent: 'worker', parentSessionId: parent, title: `child ${i}` }).id);
  for (const k of kids) sendMessage(b.store, k, 'do your part');
  const d = await startDaemon(t, b, { concurrency: 1 });
  await d.until(() => d.d.results.filter((r) => r.session_id === parent && r.outcome === 'executed').length >= 3 || d.d.results.filter((r) => r.outcome === 'executed').length >= 6);
  const order = d.d.results.filter((r) => r.outcome === 'executed').map((r) => (r.session_id === parent ? `parent:${r.trigger}` : 'child'));
  // The parent was queued before the child's slot was handed on, so no sibling ran in between.
  assert.deepEqual(order, ['child', 'parent:child', 'child', 'parent:child', 'child', 'parent:child']);
});

test('the cost of a tree: the parent\'s tree_usage.cost_usd is the sum of cost_usd over every request of its three logs', { timeout: 30_000 }, async (t) => {
  // Every request costs the same (one model, one usage), so the order the children and the parent's runs take does not matter.
  const b = await tree(t, [spawn('task A: count the apples', 'task B: count the pears'), ...Array.from({ length: 6 }, (_, i) => say(`answer #${i + 1}`))]);
  const parent = b.session('split the work between two workers', 'boss');
  const td = await startDaemon(t, b, { concurrency: 4 });
  await td.until(() => {
    const s = b.store.snapshot(parent, { persist: false });
    const kids = Object.values(s.children);
    return kids.length === 2 && kids.every((k) => k.last_report_run !== null) && s.status === 'idle' && s.pending_events.length === 0;
  });
  assert.equal(b.fake.unexpected, 0);
  const bossRequests = b.fake.requests.filter(isBoss).length;
  // The spawning reply, its turn's end, then one request per run on the reports (one or two runs).
  assert.ok(bossRequests === 3 || bossRequests === 4, `the parent asked ${bossRequests} times`);
  assert.equal(b.fake.requests.filter(isWorker).length, 2);
  const kids = Object.keys(b.store.snapshot(parent, { persist: false }).children);
  assert.equal(kids.length, 2);

  const ends = [parent, ...kids].flatMap((id) => readLog(b.store.paths(id).events).filter((e) => e.type === 'span.model_request_end'));
  assert.equal(ends.length, b.fake.requests.length);
  for (const e of ends) assert.ok(Math.abs(e.cost_usd - REQUEST_COST) < 1e-12, `a request cost ${e.cost_usd}, not ${REQUEST_COST}`);
  const sum = ends.reduce((n, e) => n + e.cost_usd, 0);
  const snap = JSON.parse(fs.readFileSync(b.store.paths(parent).snapshot, 'utf8'));
  assert.ok(sum > 0);
  assert.ok(Math.abs(snap.tree_usage.cost_usd - sum) < 1e-9, `tree_usage.cost_usd ${snap.tree_usage.cost_usd} vs the sum over the logs ${sum}`);
  assert.ok(Math.abs(snap.usage.cost_usd - bossRequests * REQUEST_COST) < 1e-9, 'its own: its requests');
  assert.ok(Math.abs(snap.tree_usage.cost_usd - (bossRequests + 2) * REQUEST_COST) < 1e-9, 'its tree: its requests and one per child');
  assert.equal(snap.tree_usage.input_tokens, (bossRequests + 2) * USAGE.input_tokens);
  assert.equal(snap.tree_usage.output_tokens, (bossRequests + 2) * USAGE.output_tokens);
  for (const k of kids) assert.ok(Math.abs(snap.children[k].tree_usage.cost_usd - REQUEST_COST) < 1e-12);

  // openboa usage --tree --json tells the same.
  const u = await cliInProcess(['usage', parent, '--tree', '--json'], { home: b.h.root });
  assert.equal(u.code, 0, u.stderr);
  const j = JSON.parse(u.stdout);
  assert.ok(Math.abs(j.tree_usage.cost_usd - sum) < 1e-9);
  assert.deepEqual(j.children.map((c: { session_id: string }) => c.session_id).sort(), [...kids].sort());
  assertLogsValid([parent, ...kids].map((id) => b.store.paths(id).events));
});

test('interrupt cascade through the daemon: the parent\'s interrupt reaches its child waiting on its model, which stops and reports; no model is asked again until a person writes', { timeout: 30_000 }, async (t) => {
  const b = await tree(t, [spawn('task A: count the apples'), say('a worker is on it'), { hang: true, for: isWorker }]);
  const parent = b.session('hand the counting to a worker', 'boss');
  const td = await startDaemon(t, b, { concurrency: 4 });
  await b.fake.waitForRequests(3);
  assert.equal(b.fake.requests.slice(0, 3).filter(isWorker).length, 1, 'one of the three is the child\'s, the one left hanging');
  const child = Object.keys(b.store.snapshot(parent, { persist: false }).children)[0]!;
  await td.until(() => b.store.snapshot(parent, { persist: false }).status === 'idle');
  b.store.appendUserEvent(parent, { type: 'user.interrupt', reason: 'stop the tree' });
  // The parent's run passes the interrupt on; the child's run is cut, ends, and reports.
  await td.until(() => {
    const p = b.store.snapshot(parent, { persist: false });
    return b.store.snapshot(child, { persist: false }).status === 'idle' && p.status === 'idle' && p.children[child]?.last_report_run !== null;
  });
  const childLog = readLog(b.store.paths(child).events);
  assert.equal(childLog.filter((e) => e.type === 'user.interrupt').length, 1);
  assert.match(String(childLog.find((e) => e.type === 'user.interrupt')!.reason), new RegExp(`parent session ${parent} was interrupted`));
  assert.equal(b.fake.requests.length, 3, 'nobody asked a model after the interrupt');
  const p = b.store.snapshot(parent, { persist: false });
  assert.ok(p.pending_events.some((e) => e.type === 'session.thread_status_idle'), 'the report waits in the parent\'s log');
  // A person's next message wakes it, and that run reads the report with it.
  b.fake.push(say('the worker was stopped'));
  b.store.appendUserEvent(parent, { type: 'user.message', content: [{ type: 'text', text: 'what happened?' }] });
  await td.until(() => {
    const q = b.store.snapshot(parent, { persist: false });
    return q.status === 'idle' && q.pending_events.length === 0 && b.fake.requests.length === 4;
  });
  const parentRuns = td.d.results.filter((r) => r.session_id === parent && r.outcome === 'executed');
  assert.deepEqual(parentRuns.map((r) => r.trigger), ['event', 'event', 'event'], 'the task, the interrupt, the message: no run on the report');
  assert.ok(textsOf(b.fake.requests[3]!).includes(`[child session ${child} (agent worker) is idle: end_turn]`));
  assert.equal(b.fake.unexpected, 0);
  assertLogsValid([parent, child].map((id) => b.store.paths(id).events));
});

/** A home for a real daemon process: the two agents, the scripted server, a parent with its task. */
async function processHome(t: TestContext, steps: Step[]) {
  const h = tempHome(t);
  writeAgents(h);
  const fake = await startFakeAnthropic(steps);
  t.after(() => fake.close());
  const env = { ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: fake.url };
  const store = new SessionStore(h.home, systemDeps(env));
  const parent = createSession(store, { agent: 'boss' }).id;
  sendMessage(store, parent, 'hand the counting to a worker');
  return { h, fake, env, store, parent };
}

/** The parent is idle with nothing pending and has taken in the report of `child`'s last run. */
function settled(store: SessionStore, parent: string, child: string): boolean {
  const p = store.snapshot(parent, { persist: false });
  const c = store.snapshot(child, { persist: false });
  return c.status === 'idle' && p.status === 'idle' && p.pending_events.length === 0 && p.children[child]?.last_report_run === c.last_wake_id;
}

/** Exactly once: the report of the child's last run is taken in once, read once, whatever the log holds of repeats. */
function assertOneReport(fake: FakeAnthropic, store: SessionStore, parent: string, child: string, answer: string) {
  const childLog = readLog(store.paths(child).events);
  const parentLog = readLog(store.paths(parent).events);
  const childRun = runsOf(childLog).at(-1)!;
  assert.equal(childLog.at(-1)!.type, 'session.status_idle');
  assert.equal(childLog.at(-1)!.wake_id, childRun);
  const rep = reportIn(parentLog, childRun);
  assert.ok(rep.lines.length === 2 || rep.lines.length === 4, `the report's lines: ${rep.lines.length} (itself, and maybe a dropped repeat)`);
  assert.equal(rep.messagesTaken, 1, 'the report message is taken in once');
  assert.equal(rep.idlesTaken, 1, 'the report idle is taken in once');
  // No other report of this child was taken in (a run cut short reports nothing).
  const reports = parentLog.filter((e) => e.type === 'session.thread_status_idle' && e.session_thread_id === child);
  assert.equal(reports.filter((e) => takenIn(parentLog).includes(e.id)).length, 1);
  const last = fake.requests.filter(isBoss).at(-1)!;
  assert.equal(textsOf(last).filter((x) => x === reportText(child, answer)).length, 1, 'the parent\'s model read the report once');
  assertLogsValid([parent, child].map((id) => store.paths(id).events));
}

test('kill -9 of the daemon once the child\'s run is idle in its log: after a restart, the parent has taken in exactly one report', { timeout: 60_000 }, async (t) => {
  // One run at a time: boss (spawn, end of turn), the child, boss on the report. The kill comes as
  // soon as the child's ending is in its log: before its report, while it lands, or after (the
  // parent may even be mid-run): every case must end with exactly one report taken in.
  const { h, fake, env, store, parent } = await processHome(t, [spawn('count the apples'), say('a worker is on it'), say('apples: 3'), say('noted')]);
  const d1 = spawnDaemon(t, h.root, env, ['--concurrency', '1']);
  const start = await d1.line((l) => l.kind === 'run_start' && l.session_id !== parent);
  const child = String(start.session_id);
  const childLog = store.paths(child).events;
  await whenExists(childLog, (text) => text.includes('"type":"session.status_idle"'));
  await d1.kill9();
  const before = reportIn(readLog(store.paths(parent).events), runsOf(readLog(childLog)).at(-1)!);
  t.diagnostic(`at the kill the parent's log held ${before.lines.length / 2} report(s), ${before.idlesTaken} taken in`);

  // Enough answers for a parent run the kill cut short, whatever it had asked.
  fake.push(say('noted'), say('noted'));
  const d2 = spawnDaemon(t, h.root, env, ['--concurrency', '1']);
  await d2.line(() => settled(store, parent, child));
  assert.equal(fake.unexpected, 0);
  assertOneReport(fake, store, parent, child, 'apples: 3');
  const parentLog = readLog(store.paths(parent).events);
  const takers = parentLog.filter((e) => e.type === 'session.status_running' && !e.continuation);
  assert.deepEqual(takers.map((e) => e.trigger).slice(0, 2), ['event', takers[1]?.trigger === 'recovery' ? 'recovery' : 'child']);
  assert.equal(await d2.term(), 0);
});

test('kill -9 while the child waits on its model: its cut run reports nothing; the restart\'s recovery run reports once', { timeout: 60_000 }, async (t) => {
  const { h, fake, env, store, parent } = await processHome(t, [spawn('count the apples'), say('a worker is on it'), { hang: true, for: isWorker }]);
  const d1 = spawnDaemon(t, h.root, env, ['--concurrency', '1']);
  await fake.waitForRequests(3);
  assert.equal(fake.requests.slice(0, 3).filter(isWorker).length, 1, 'one of the three is the child\'s, the one left hanging');
  const child = Object.keys(store.snapshot(parent, { persist: false }).children)[0]!;
  await d1.kill9();
  assert.equal(readLog(store.paths(parent).events).filter((e) => e.delivery_key).length, 0, 'no report yet');

  fake.push(say('apples: 3'), say('noted'));
  const d2 = spawnDaemon(t, h.root, env, ['--concurrency', '1']);
  await d2.line(() => settled(store, parent, child));
  assert.equal(fake.unexpected, 0);
  assert.equal(fake.requests.length, 5);
  const childRuns = readLog(store.paths(child).events).filter((e) => e.type === 'session.status_running' && !e.continuation);
  assert.deepEqual(childRuns.map((e) => e.trigger), ['event', 'recovery']);
  assertOneReport(fake, store, parent, child, 'apples: 3');
  const reportKeys = readLog(store.paths(parent).events).filter((e) => e.type === 'session.thread_status_idle').map((e) => e.delivery_key);
  assert.deepEqual([...new Set(reportKeys)], [`run:${childRuns[1]!.wake_id}`], 'only the run that ended reported');
  assert.equal(await d2.term(), 0);
});

test('a crash between the child\'s idle and its report: the daemon delivers it at its start, and the parent takes it in once', { timeout: 60_000 }, async (t) => {
  const { h, fake, env, store, parent } = await processHome(t, [spawn('count the apples'), say('a worker is on it'), say('apples: 3'), say('noted')]);
  const rt: Runtime = { home: h.home, store, deps: systemDeps(env) };
  // The parent's first run, here: it spawns the child and ends its turn.
  const r0 = await wake(rt, parent);
  assert.equal(r0.stop_reason?.type, 'end_turn');
  const child = Object.keys(store.snapshot(parent, { persist: false }).children)[0]!;
  // The child's run ends idle, and its report cannot be written: as if the process died between the two.
  const append = store.appendEvents.bind(store);
  store.appendEvents = (id, events, opts) => {
    if (id === parent) throw new Error('killed before the report');
    return append(id, events, opts);
  };
  const r1 = await wake(rt, child);
  store.appendEvents = append;
  assert.equal(r1.stop_reason?.type, 'end_turn');
  assert.equal(readLog(store.paths(parent).events).filter((e) => e.delivery_key).length, 0, 'the parent has no report');
  assert.equal(store.snapshot(parent, { persist: false }).pending_events.length, 0, 'nothing wakes the parent');

  const d = spawnDaemon(t, h.root, env);
  await d.line(() => settled(store, parent, child));
  assert.ok(d.lines.some((l) => l.kind === 'notice' && String(l.message).includes(`delivered the report of session ${child}`)), 'the daemon says it delivered the missing report');
  const end = await d.line((l) => l.kind === 'run_end' && l.session_id === parent);
  assert.equal(end.trigger, 'child');
  assert.equal(d.lines.filter((l) => l.kind === 'run_start').length, 1, 'only the parent ran');
  assert.equal(fake.unexpected, 0);
  assertOneReport(fake, store, parent, child, 'apples: 3');
  assert.equal(readLog(store.paths(parent).events).filter((e) => e.delivery_key === `run:${r1.wake_id}`).length, 2, 'delivered once');
  assert.equal(await d.term(), 0);
});
