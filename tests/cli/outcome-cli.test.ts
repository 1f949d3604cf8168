/**
 * `openboa outcome` appends a user.define_outcome (or refuses bad input,
 * exit 2, appending nothing); `status`, `events`, `wake` and the daemon's
 * run line show where the outcome's grading stands.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { cliInProcess } from '../helpers/cli.js';
import { tempHome } from '../helpers/home.js';
import { DEFAULT_MAX_ITERATIONS, MAX_ITERATIONS, outcomeIdOf } from '../../src/core/schema/index.js';
import { operatorLog } from '../../src/daemon/operator-log.js';
import type { WakeResult } from '../../src/core/run/wake-api.js';

const lines = (root: string, id: string) =>
  fs
    .readFileSync(path.join(root, 'sessions', id, 'events.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
const defines = (root: string, id: string) => lines(root, id).filter((e) => e.type === 'user.define_outcome');

async function session(t: TestContext, agent = 'demo') {
  const h = tempHome(t);
  const r = await cliInProcess(['session', 'create', '--agent', agent], { home: h.root });
  assert.equal(r.code, 0, r.stderr);
  return { h, id: r.stdout.trim() };
}

test('outcome appends a user.define_outcome: the outcome id from the event id, max_iterations 3 unless given, check auto, files in order', async (t) => {
  const { h, id } = await session(t);
  const r = await cliInProcess(['outcome', id, 'write', 'a', 'haiku', '--check', 'auto', '--file', 'haiku.txt', '--file', 'notes, part 2.md'], { home: h.root });
  assert.equal(r.code, 0, r.stderr);
  const [eventId, outcomeId] = r.stdout.trim().split(' ');
  assert.match(eventId!, /^sevt_/);
  assert.equal(outcomeId, outcomeIdOf(eventId!));
  assert.match(r.stderr, /^openboa: note: no daemon is running on this home \(.*\): the outcome waits until one starts/);
  const [e] = defines(h.root, id);
  assert.equal(e!.id, eventId);
  assert.equal(e!.outcome_id, outcomeId);
  assert.equal(e!.description, 'write a haiku');
  assert.equal(e!.max_iterations, DEFAULT_MAX_ITERATIONS);
  assert.deepEqual(e!.check, { auto: true });
  assert.deepEqual(e!.files, ['haiku.txt', 'notes, part 2.md']);
  assert.equal(e!.rubric, undefined);

  const json = await cliInProcess(['outcome', id, 'run the tests', '--check', 'npm test', '--max-iterations', '5', '--json'], { home: h.root });
  assert.equal(json.code, 0, json.stderr);
  assert.equal(json.stderr, '', '--json puts the notes in the result');
  const res = JSON.parse(json.stdout);
  assert.deepEqual(Object.keys(res).sort(), ['created_at', 'id', 'notes', 'outcome_id', 'type']);
  assert.equal(res.type, 'user.define_outcome');
  assert.equal(res.outcome_id, outcomeIdOf(res.id));
  assert.match(res.notes[0], /no daemon is running/);
  const second = defines(h.root, id)[1]!;
  assert.deepEqual([second.max_iterations, second.check], [5, { command: 'npm test' }]);
});

test('outcome reads the rubric from a file (relative to where it runs) or from stdin with -', async (t) => {
  const { h, id } = await session(t);
  const rubric = '# Rubric\n\n1. three lines\n2. a season word\n';
  h.write('work/rubric.md', rubric);
  const fromFile = await cliInProcess(['outcome', id, 'a haiku', '--rubric', 'rubric.md'], { home: h.root, cwd: path.join(h.root, 'work') });
  assert.equal(fromFile.code, 0, fromFile.stderr);
  const fromStdin = await cliInProcess(['outcome', id, 'another haiku', '--rubric', '-'], { home: h.root, input: rubric });
  assert.equal(fromStdin.code, 0, fromStdin.stderr);
  assert.deepEqual(
    defines(h.root, id).map((e) => e.rubric),
    [
      { type: 'text', content: rubric },
      { type: 'text', content: rubric.replace(/\n$/, '') },
    ],
  );
});

test('bad input exits 2 with one line naming the field, and appends nothing', async (t) => {
  const { h, id } = await session(t);
  h.write('empty.md', '  \n');
  const before = lines(h.root, id).length;
  for (const [args, field, input] of [
    [['', '--check', 'auto'], /<description>/],
    [['x', '--max-iterations', '0'], /--max-iterations 0 is out of range/],
    [['x', '--max-iterations', String(MAX_ITERATIONS + 1)], new RegExp(`--max-iterations ${MAX_ITERATIONS + 1} is out of range \\(expected a whole number >= 1 and <= ${MAX_ITERATIONS}`)],
    [['x', '--max-iterations', 'abc'], /--max-iterations "abc" is not a whole number/],
    [['x', '--rubric', 'missing.md'], /--rubric cannot read missing\.md: no such file/],
    [['x', '--rubric', 'empty.md'], /--rubric /],
    [['x', '--rubric', '-'], /--rubric /, ''],
    [['x', '--check', ' '], /--check /],
    [['x', '--file', 'a', '--file', ''], /--file needs a path/],
    [['x', ...Array.from({ length: 21 }, (_, i) => ['--file', `f${i}`]).flat()], /--file /],
  ] as Array<[string[], RegExp, string?]>) {
    const r = await cliInProcess(['outcome', id, ...args], { home: h.root, ...(input !== undefined ? { input } : {}) });
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, new RegExp(`^openboa: ${field.source}`), args.join(' '));
    assert.equal(r.stderr.trim().split('\n').length, 1, args.join(' '));
  }
  assert.equal(lines(h.root, id).length, before, 'nothing was appended');
  const json = await cliInProcess(['outcome', id, 'x', '--max-iterations', '0', '--json'], { home: h.root });
  assert.equal(json.code, 2);
  assert.match(JSON.parse(json.stderr).error.message, /--max-iterations/);
});

test("the catalog's help states the outcome bounds the core enforces", async (t) => {
  const { h } = await session(t);
  const r = await cliInProcess(['help', 'outcome'], { home: h.root });
  assert.match(r.stdout, new RegExp(`1 to ${MAX_ITERATIONS} \\(default ${DEFAULT_MAX_ITERATIONS}\\)`));
});

/** A scripted agent whose rubric grader says needs_revision, then satisfied; one model request per run, so each grade ends a run. */
function gradedAgent(h: ReturnType<typeof tempHome>) {
  h.write(
    'agents/graded/agent.yaml',
    YAML.stringify({ provider: 'scripted', model: 'scripted-graded', system: 'You write haiku.', environment: 'local', script: 'script.yaml', limits: { max_model_requests_per_wake: 1 } }),
  );
  h.write(
    'agents/graded/script.yaml',
    YAML.stringify({
      turns: [{ text: 'one two three' }, { text: 'autumn leaves fall' }],
      grades: [
        { result: 'needs_revision', explanation: 'criterion 2: the haiku has no season word\nand more detail on a second line' },
        { result: 'satisfied', explanation: 'all criteria met' },
      ],
    }),
  );
}

test('status, events, wake and the daemon line follow an outcome through its evaluations', async (t) => {
  const h = tempHome(t);
  gradedAgent(h);
  const id = (await cliInProcess(['session', 'create', '--agent', 'graded'], { home: h.root })).stdout.trim();
  const def = await cliInProcess(['outcome', id, 'write a haiku about autumn', '--rubric', '-', '--json'], { home: h.root, input: '1. three lines\n2. a season word' });
  assert.equal(def.code, 0, def.stderr);
  const oid = JSON.parse(def.stdout).outcome_id as string;

  const pending = await cliInProcess(['status', id], { home: h.root });
  assert.match(pending.stdout, new RegExp(`^outcome    ${oid}  pending \\(the next run takes it in\\)  "write a haiku about autumn"$`, 'm'));

  // Run 1: the agent answers, the grader asks for a revision, and the run has no request left for it.
  const w1 = await cliInProcess(['wake', id, '--json'], { home: h.root });
  assert.equal(w1.code, 0, w1.stderr);
  const r1 = JSON.parse(w1.stdout) as WakeResult;
  assert.deepEqual(r1.outcome_evaluations, [{ outcome_id: oid, iteration: 0, result: 'needs_revision' }]);

  const open = await cliInProcess(['status', id], { home: h.root });
  assert.equal(open.code, 0, open.stderr);
  assert.match(open.stdout, new RegExp(`^outcome    ${oid}  running, evaluation 2 of 3  "write a haiku about autumn"\n {11}last evaluation \\(1\\): needs_revision: criterion 2: the haiku has no season word$`, 'm'));
  const st = JSON.parse((await cliInProcess(['status', id, '--json'], { home: h.root })).stdout);
  assert.equal(st.outcome.outcome_id, oid);
  assert.equal(st.outcome.state, 'running');
  assert.deepEqual(st.pending_outcomes, []);
  assert.deepEqual(st.outcome_evaluations.map((x: { outcome_id: string; result: string }) => [x.outcome_id, x.result]), [[oid, 'running']]);

  // Run 2 (the revisit due now): the revision is graded satisfied.
  const w2 = await cliInProcess(['wake', id], { home: h.root });
  assert.equal(w2.code, 0, w2.stderr);
  assert.match(w2.stdout, new RegExp(`^  outcome ${oid} evaluation 2: satisfied$`, 'm'));
  const done = await cliInProcess(['status', id], { home: h.root });
  assert.match(done.stdout, new RegExp(`^outcome    ${oid}  satisfied at evaluation 2 \\([^)]+\\)  "write a haiku about autumn"\n {11}all criteria met$`, 'm'));

  const ev = await cliInProcess(['events', id], { home: h.root, env: { COLUMNS: '300' } });
  assert.equal(ev.code, 0, ev.stderr);
  const view = ev.stdout.split('\n');
  const of = (type: string) => view.filter((l) => l.includes(` ${type} `)).map((l) => l.slice(l.indexOf(type) + type.length).trim());
  assert.deepEqual(of('user.define_outcome'), [`${oid} "write a haiku about autumn"; rubric, at most 3 evaluation(s)`]);
  assert.deepEqual(of('span.outcome_evaluation_start'), [`${oid} evaluation 1`, `${oid} evaluation 2`]);
  assert.deepEqual(of('span.outcome_evaluation_end'), [`${oid} evaluation 1: needs_revision: criterion 2: the haiku has no season word`, `${oid} evaluation 2: satisfied: all criteria met`]);

  // The daemon's run-end line, text and JSON, from the second run's result.
  assert.equal(JSON.parse((await cliInProcess(['status', id, '--json'], { home: h.root })).stdout).outcome, null);
  const written: string[] = [];
  const result = { ...r1, outcome_evaluations: [...r1.outcome_evaluations, { outcome_id: oid, iteration: 1, result: 'satisfied' as const }] };
  operatorLog((l) => written.push(l), false, () => 0).end(result);
  assert.match(written[0]!, new RegExp(`tool call\\(s\\)  outcome ${oid} evaluation 2: satisfied$`));
  operatorLog((l) => written.push(l), true, () => 0).end(r1);
  assert.deepEqual(JSON.parse(written[1]!).outcome_evaluations, [{ outcome_id: oid, iteration: 0, result: 'needs_revision' }]);
  const quiet: string[] = [];
  operatorLog((l) => quiet.push(l), false, () => 0).end({ ...r1, outcome_evaluations: [] });
  assert.doesNotMatch(quiet[0]!, /outcome/);
});
