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
import { cliInProcess } from '../helpers/cli.js';
import { tempHome } from '../helpers/home.js';
import { testDeps } from '../helpers/deps.js';
import { validateLog } from '../helpers/event-schema.js';
import { NO_SHELL } from '../helpers/run.js';
import { SessionStore } from '../../src/core/store/session-store.js';
import { resolveHome } from '../../src/core/home.js';
import { createSession } from '../../src/core/create-session.js';
import { defineOutcome } from '../../src/core/session-ops.js';
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
