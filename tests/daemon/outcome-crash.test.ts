/**
 * kill -9 of a real daemon process in the middle of an outcome evaluation
 * (between span.outcome_evaluation_start and its end): the restarted daemon
 * grades again under the same start, so every iteration gets exactly one end.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { execSync } from 'node:child_process';
import { tempHome, whenExists } from '../helpers/home.js';
import { writeAgent, BWRAP, NO_SHELL } from '../helpers/run.js';
import { startFakeAnthropic, type RecordedRequest, type Step } from '../helpers/fake-anthropic.js';
import { spawnDaemon } from '../helpers/daemon-process.js';
import { validateEvent, validateLog } from '../helpers/event-schema.js';
import { SessionStore } from '../../src/core/store/session-store.js';
import { createSession } from '../../src/core/ops/create-session.js';
import { defineOutcome } from '../../src/core/ops/session-ops.js';
import { systemDeps } from '../../src/core/foundation/deps.js';
import { outcomeIdOf } from '../../src/core/schema/index.js';

const grade = (result: string, explanation: string): Step => ({ toolUses: [{ name: 'grade_outcome', input: { result, explanation } }] });
const isGrader = (r: RecordedRequest) => (r.raw as { tool_choice?: unknown }).tool_choice !== undefined;

test('kill -9 between an evaluation\'s start and end: after a restart, exactly one end per iteration, naming the original start', { timeout: 120_000 }, async (t) => {
  const h = tempHome(t);
  // The second evaluation's grader request never answers: the daemon is killed while it waits.
  const fake = await startFakeAnthropic([{ text: 'draft one' }, grade('needs_revision', 'add a title'), { text: 'draft two, with a title' }, { hang: true }]);
  t.after(() => fake.close());
  writeAgent(h, 'test');
  const env = { ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: fake.url };
  const store = new SessionStore(h.home, systemDeps({}));
  const id = createSession(store, { agent: 'test' }).id;
  const def = defineOutcome(store, id, { description: 'write a draft', rubric: '1. has a title' });
  const oid = outcomeIdOf(def.id);
  const file = path.join(h.root, 'sessions', id, 'events.jsonl');
  const log = () => fs.readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l));

  const d1 = spawnDaemon(t, h.root, env);
  await fake.waitForRequests(4);
  assert.ok(isGrader(fake.requests[3]!), 'the hanging request is the second grading');
  // The start is written before the grader is asked.
  const before = log();
  const starts0 = before.filter((e) => e.type === 'span.outcome_evaluation_start');
  assert.deepEqual(starts0.map((e) => e.iteration), [0, 1]);
  assert.equal(before.filter((e) => e.type === 'span.outcome_evaluation_end').length, 1, 'iteration 1 has no end yet');
  await d1.kill9();
  assert.equal(log().at(-1).type, 'span.outcome_evaluation_start', 'the log ends mid-evaluation');

  fake.push(grade('satisfied', 'it has a title now'));
  const d2 = spawnDaemon(t, h.root, env);
  const end = await d2.line((l) => l.kind === 'run_end' && l.session_id === id);
  assert.equal(end.trigger, 'recovery');
  assert.deepEqual(end.stop_reason, { type: 'end_turn' });
  assert.equal(fake.unexpected, 0);
  assert.equal(fake.requests.length, 5, 'the agent was not asked again: only the grading was redone');
  assert.ok(isGrader(fake.requests[4]!));
  assert.match(JSON.stringify(fake.requests[4]!.body.messages), /<final_message-(\w+)>\\ndraft two, with a title\\n<\/final_message-\1>/, 'the redone grading reads the iteration\'s final message from the log');

  const after = log();
  const starts = after.filter((e) => e.type === 'span.outcome_evaluation_start');
  const ends = after.filter((e) => e.type === 'span.outcome_evaluation_end');
  assert.equal(starts.length, 2, 'no second start for the interrupted iteration');
  assert.deepEqual(ends.map((e) => [e.outcome_id, e.iteration, e.result]), [
    [oid, 0, 'needs_revision'],
    [oid, 1, 'satisfied'],
  ]);
  assert.deepEqual(ends.map((e) => e.outcome_evaluation_start_id), starts.map((e) => e.id), 'each end names its iteration\'s original start');
  const snap = JSON.parse(fs.readFileSync(path.join(h.root, 'sessions', id, 'session.json'), 'utf8'));
  assert.deepEqual(snap.outcome_evaluations.map((x: { outcome_id: string; result: string; iteration: number }) => [x.outcome_id, x.result, x.iteration]), [[oid, 'satisfied', 1]]);
  assert.equal(snap.outcome, null);
  assert.equal(after.at(-1).type, 'session.status_idle');
  assert.deepEqual(validateLog(file).errors, []);
  assert.deepEqual(validateEvent(after.find((e) => e.type === 'user.define_outcome')), []);
  assert.equal(await d2.term(), 0);
});

test('kill -9 while the check runs in the sandbox: the check dies with the daemon; the restart runs it again under the same start', { skip: NO_SHELL, timeout: 120_000 }, async (t) => {
  const h = tempHome(t);
  const fake = await startFakeAnthropic([{ text: 'ready for the check' }]);
  t.after(() => fake.close());
  writeAgent(h, 'test');
  const env = { ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: fake.url };
  const store = new SessionStore(h.home, systemDeps({}));
  const id = createSession(store, { agent: 'test' }).id;
  const ws = BWRAP ? '/workspace' : store.paths(id).workspace;
  // A duration no other process has, to find this sleep among the machine's.
  const nap = `61.${process.pid}${Date.now() % 100_000}`;
  // The first check hangs; the one after the restart finds its mark and passes.
  const def = defineOutcome(store, id, { description: 'pass the check', check: `[ -e ${ws}/checked-once ] && { echo second run; exit 0; }; echo > ${ws}/checked-once; sleep ${nap}` });
  const file = store.paths(id).events;
  const log = () => fs.readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l));

  const d1 = spawnDaemon(t, h.root, env);
  await whenExists(`${store.paths(id).workspace}/checked-once`);
  await d1.kill9();
  assert.equal(log().at(-1).type, 'span.outcome_evaluation_start', 'the log ends mid-evaluation');
  const alive = () => execSync(`pgrep -f 'slee[p] ${nap}' || true`).toString().trim();
  for (let i = 0; i < 50 && alive() !== ''; i++) await new Promise((r) => setTimeout(r, 100));
  assert.equal(alive(), '', 'the check died with the daemon');

  const d2 = spawnDaemon(t, h.root, env);
  const end = await d2.line((l) => l.kind === 'run_end' && l.session_id === id);
  assert.equal(end.trigger, 'recovery');
  assert.deepEqual(end.stop_reason, { type: 'end_turn' });
  assert.equal(fake.requests.length, 1, 'the agent was not asked again, and a check alone asks no grader');
  const after = log();
  const starts = after.filter((e) => e.type === 'span.outcome_evaluation_start');
  const ends = after.filter((e) => e.type === 'span.outcome_evaluation_end');
  assert.equal(starts.length, 1);
  assert.deepEqual(ends.map((e) => [e.outcome_id, e.iteration, e.result, e.outcome_evaluation_start_id]), [[outcomeIdOf(def.id), 0, 'satisfied', starts[0].id]]);
  assert.match(ends[0].explanation, /Check passed/);
  assert.equal(after.at(-1).type, 'session.status_idle');
  assert.deepEqual(validateLog(file).errors, []);
  assert.equal(await d2.term(), 0);
});
