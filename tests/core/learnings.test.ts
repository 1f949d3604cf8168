/**
 * Learnings in-process: the queued model port, the memory sandbox, a manual
 * clock, and the real store, loop and agent folder on a temp home.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import YAML from 'yaml';
import { SessionStore } from '../../src/core/store/session-store.js';
import { confirmToolUse, sendMessage } from '../../src/core/ops/session-ops.js';
import { createSession } from '../../src/core/ops/create-session.js';
import { wake } from '../../src/core/run/wake.js';
import type { Runtime } from '../../src/core/run/run-context.js';
import type { WakeOptions } from '../../src/core/run/wake-api.js';
import { readLines } from '../../src/core/store/jsonl.js';
import { parseEventLine } from '../../src/core/store/parse-line.js';
import type { SessionEvent } from '../../src/core/schema/index.js';
import { learningsPaths, mergeLearnings, readLearnings } from '../../src/core/memory/learnings.js';
import { tempHome } from '../helpers/home.js';
import { testDeps } from '../helpers/deps.js';
import { cliInProcess } from '../helpers/cli.js';
import { queuedModel, type Reply } from '../helpers/queued-model.js';
import { MemorySandbox } from '../../src/core/sandbox/memory-sandbox.js';

function setup(t: TestContext, replies: Reply[], tools: Record<string, unknown> = {}) {
  const h = tempHome(t);
  h.write('agents/unit/agent.yaml', YAML.stringify({ provider: 'anthropic', model: 'unit-model', system: 'You are a unit test.', environment: 'local', tools }));
  const model = queuedModel(replies);
  const sandbox = new MemorySandbox({ exec: () => 'ran' });
  const deps = { ...testDeps({}), models: model.registry, sandbox: () => sandbox };
  const store = new SessionStore(h.home, deps);
  const rt: Runtime = { home: h.home, store, deps };
  const session = () => createSession(store, { agent: 'unit' }).id;
  const events = (id: string): SessionEvent[] =>
    readLines(store.paths(id).events)
      .lines.map((l) => parseEventLine(l, deps.clock.now()))
      .flatMap((r) => (r.kind === 'event' ? [r.event] : []));
  const paths = learningsPaths(h.home, 'unit');
  const journal = () => readLearnings(paths.journal);
  return { h, model, store, rt, deps, session, events, paths, journal, run: (id: string, w?: WakeOptions) => wake(rt, id, w) };
}

const learn = (kind: string, text: string, tags?: string[]): Reply => ({ tools: [{ name: 'learn', input: { kind, text, ...(tags ? { tags } : {}) } }] });

test('a lesson learned in one session is in the system prompt of the next session, merged with its repeat; a retired one leaves it', async (t) => {
  const s = setup(t, [learn('lesson', 'Run the tests with npm test before committing.', ['tests']), { text: 'noted' }, learn('lesson', 'run the tests with  NPM TEST before committing'), { text: 'again' }, { text: 'second session' }, { text: 'third session' }]);
  const a = s.session();
  sendMessage(s.store, a, 'learn something');
  await s.run(a);
  // The learning run's own prompt does not change mid-run (the prompt cache).
  assert.doesNotMatch(s.model.requests[1]!.system, /Learnings/);
  assert.match(JSON.stringify(s.model.requests[1]!.messages.at(-1)), /Recorded lesson lrn_[0-9a-f]{32}/);
  sendMessage(s.store, a, 'again');
  await s.run(a);
  const j = s.journal();
  assert.equal(j.entries.length, 2);
  assert.equal(j.entries[0]!.entry.session_id, a);
  assert.equal(j.entries[0]!.entry.event_id, s.events(a).find((e) => e.type === 'agent.tool_use' && e.name === 'learn')!.id);
  const merged = mergeLearnings(j);
  assert.equal(merged.length, 1);
  assert.equal(merged[0]!.count, 2);

  const b = s.session();
  sendMessage(s.store, b, 'hello');
  await s.run(b);
  const system = s.model.requests.at(-1)!.system;
  assert.match(system, /# Learnings/);
  assert.equal(system.match(/before committing/g)?.length, 1, 'duplicates merged');
  assert.match(system, /lesson, noted by the agent \(\d{4}-\d\d-\d\d, ×2\): run the tests with NPM TEST before committing \[tests\]/);
  assert.match(fs.readFileSync(s.paths.markdown, 'utf8'), /×2/);

  const listed = await cliInProcess(['learnings', 'unit', '--json'], { home: s.h.home.root });
  assert.equal(listed.code, 0, listed.stderr);
  const data = JSON.parse(listed.stdout);
  assert.equal(data.learnings.length, 1);
  assert.equal(data.learnings[0].count, 2);
  const retired = await cliInProcess(['learnings', 'unit', '--retire', merged[0]!.ids[1]!], { home: s.h.home.root });
  assert.equal(retired.code, 0, retired.stderr);
  assert.match(fs.readFileSync(s.paths.journal, 'utf8'), /"type":"retire"/);
  assert.doesNotMatch(fs.readFileSync(s.paths.markdown, 'utf8'), /before committing/);
  const c = s.session();
  sendMessage(s.store, c, 'hello');
  await s.run(c);
  assert.doesNotMatch(s.model.requests.at(-1)!.system, /Learnings|before committing/);
  const table = await cliInProcess(['learnings', 'unit'], { home: s.h.home.root });
  assert.match(table.stdout, /retired/);
  const unknown = await cliInProcess(['learnings', 'unit', '--retire', 'lrn_0123'], { home: s.h.home.root });
  assert.notEqual(unknown.code, 0);
  assert.match(unknown.stderr, /no learning "lrn_0123"/);
});

test('a deny message becomes a correction by itself, once, also when the run that settled it died before recording it', async (t) => {
  const s = setup(t, [{ tools: [{ name: 'bash', input: { command: 'rm -rf /workspace/build' } }] }, { text: 'understood' }, { text: 'still here' }, { text: 'and here' }], { bash: { permission: 'always_ask' } });
  const id = s.session();
  sendMessage(s.store, id, 'clean up');
  await s.run(id);
  const use = s.events(id).find((e) => e.type === 'agent.tool_use')!;
  const conf = confirmToolUse(s.store, id, use.id, { allow: false, message: 'never delete build outputs' });
  // The run that settles the denial dies before its after-run hooks: none records the correction.
  await s.run(id, { hooks: (d) => ({ ...d, afterRun: d.afterRun.filter((h) => !String(h.afterRun).includes('denials')) }) });
  assert.equal(s.journal().entries.length, 0);
  sendMessage(s.store, id, 'go on');
  await s.run(id);
  sendMessage(s.store, id, 'and on');
  await s.run(id);
  const j = s.journal();
  assert.equal(j.entries.length, 1);
  const c = j.entries[0]!.entry;
  assert.equal(c.kind, 'correction');
  assert.equal(c.event_id, conf.id);
  assert.match(c.text, /^A person denied the tool call bash \{"command":"rm -rf \/workspace\/build"\} and said: never delete build outputs$/);
  assert.equal(c.source, 'person');
  assert.match(fs.readFileSync(s.paths.markdown, 'utf8'), /- correction, from a person \(.*never delete build outputs/);
});

test('a malformed line of learnings.jsonl is skipped with a note naming its line; the run goes on with the rest', async (t) => {
  const s = setup(t, [{ text: 'hi' }]);
  const good = { id: `lrn_${'a'.repeat(32)}`, kind: 'error', text: 'Do not push to main.', tags: [], session_id: 's', event_id: 'e', wake_id: null, at: '2026-01-01T00:00:00.000Z' };
  s.h.write('agents/unit/learnings.jsonl', `{not json\n${JSON.stringify({ ...good, kind: 'wish' })}\n${JSON.stringify(good)}\n`);
  const id = s.session();
  sendMessage(s.store, id, 'hello');
  const r = await s.run(id);
  assert.equal(r.failure, null);
  const system = s.model.requests[0]!.system;
  assert.match(system, /error, noted by the agent \(2026-01-01\): Do not push to main\./);
  assert.doesNotMatch(system, /Skipped/);
  assert.match(fs.readFileSync(s.paths.markdown, 'utf8'), /learnings\.jsonl line 1: not JSON[\s\S]*line 2: not a learning: kind/);
  const listed = await cliInProcess(['learnings', 'unit'], { home: s.h.home.root });
  assert.equal(listed.code, 0);
  assert.match(listed.stderr, /learnings\.jsonl line 1 skipped: not JSON/);
  assert.match(listed.stderr, /line 2 skipped: not a learning/);
});
