/**
 * The first minute (README): `openboa start` gives the bundled demo agent an
 * outcome with a check. One run, offline, in the real sandbox: the check
 * fails once (its output reaches the agent), the agent fixes its note, the
 * check passes.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { cliInProcess, CLI } from '../helpers/cli.js';
import { beforeHomeRemoved, tempHome } from '../helpers/home.js';
import { testDeps } from '../helpers/deps.js';
import { validateLog } from '../helpers/event-schema.js';
import { NO_SHELL } from '../helpers/run.js';
import { SessionStore } from '../../src/core/store/session-store.js';
import { resolveHome } from '../../src/core/foundation/home.js';
import { createSession } from '../../src/core/ops/create-session.js';
import { defineOutcome } from '../../src/core/ops/session-ops.js';
import { FIRST_OUTCOME } from '../../src/cli/commands/start.js';

test('the demo\'s first minute: its outcome\'s check fails once, the agent fixes notes.md, the check passes', { skip: NO_SHELL }, async (t) => {
  const { root } = tempHome(t);
  const s = new SessionStore(resolveHome(root), testDeps());
  const id = createSession(s, { agent: 'demo', title: 'first demo' }).id;
  defineOutcome(s, id, FIRST_OUTCOME);
  const r = await cliInProcess(['wake', id, '--json'], { home: root });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(JSON.parse(r.stdout).stop_reason.type, 'end_turn');
  const dir = path.join(root, 'sessions', id);
  const log = fs.readFileSync(path.join(dir, 'events.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  const ends = log.filter((e) => e.type === 'span.outcome_evaluation_end');
  assert.deepEqual(ends.map((e) => [e.iteration, e.result]), [[0, 'needs_revision'], [1, 'satisfied']]);
  assert.match(ends[0].explanation, /exited 1\.\nnotes\.md has no line "Status: ok"/);
  assert.match(fs.readFileSync(path.join(dir, 'workspace', 'notes.md'), 'utf8'), /^Status: ok$/m);
  const outcome = JSON.parse(fs.readFileSync(path.join(dir, 'runtime', 'outcome.json'), 'utf8'));
  assert.equal(outcome.outcome, null);
  assert.equal(outcome.outcome_evaluations[0].result, 'satisfied');
  assert.deepEqual(validateLog(path.join(dir, 'events.jsonl')).errors, []);
});

test('openboa start on an empty home: a demo session with its outcome, and the daemon prints the failing grade, the fix, the passing grade', { skip: NO_SHELL, timeout: 60_000 }, async (t) => {
  const { root } = tempHome(t);
  const child = spawn(process.execPath, [CLI, '--home', root, 'start'], { stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  beforeHomeRemoved(t, async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  });
  let out = '';
  let err = '';
  child.stderr!.on('data', (d) => (err += d));
  // The first run's end line carries the grade; the daemon's own output says when it is there.
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no graded end line; stdout: ${out.slice(0, 3000)}; stderr: ${err.slice(0, 1000)}`)), 30_000);
    child.stdout!.on('data', (d) => {
      out += d;
      if (/ end {4}\S+ .*evaluation 2: satisfied/.test(out)) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  child.kill('SIGTERM');
  assert.equal(await exited, 0, err);
  const id = /created a demo session and gave it an outcome with a check: (\S+)/.exec(out + err)?.[1];
  assert.ok(id, out + err);
  const work = out.split('\n').flatMap((l) => {
    const m = /^\S+ {4}\w{8} {2}(said|tool|grade) (.*)$/.exec(l);
    return m ? [`${m[1]} ${m[2]}`] : [];
  });
  const fail = work.findIndex((l) => /^grade evaluation 1: needs_revision: Check failed: /.test(l));
  const fix = work.findIndex((l) => l === 'tool  edit: /workspace/notes.md');
  const pass = work.findIndex((l) => /^grade evaluation 2: satisfied: Check passed: /.test(l));
  assert.ok(fail > 0 && fix > fail && pass > fix, work.join('\n'));
  const snap = JSON.parse(fs.readFileSync(path.join(root, 'sessions', id, 'session.json'), 'utf8'));
  assert.deepEqual(snap.outcome_evaluations.map((x: { description: string; result: string; iteration: number }) => [x.description, x.result, x.iteration]), [[FIRST_OUTCOME.description, 'satisfied', 1]]);
  assert.match(err, /watch it fire below/);

  // A second start makes no session and promises nothing it will not show.
  const again = spawn(process.execPath, [CLI, '--home', root, 'start'], { stdio: ['ignore', 'pipe', 'pipe'] });
  const againExited = new Promise<number | null>((resolve) => again.on('exit', (code) => resolve(code)));
  let err2 = '';
  await new Promise<void>((resolve) =>
    again.stderr!.on('data', (d) => {
      err2 += d;
      if (err2.includes('Ctrl-C stops')) resolve();
    }),
  );
  again.kill('SIGTERM');
  assert.equal(await againExited, 0, err2);
  assert.doesNotMatch(err2, /created a demo session|watch it fire below/);
  assert.match(err2, /This home has 1 session\(s\) \(openboa sessions lists them\): the daemon runs whichever has work/);
});
