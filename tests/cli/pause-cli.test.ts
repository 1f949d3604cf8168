/**
 * `openboa pause` and `openboa resume` from the command line, and how
 * `status`, `sessions` and `send` show a paused session (docs/context.md).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { cliInProcess } from '../helpers/cli.js';
import { tempHome } from '../helpers/home.js';

async function create(root: string): Promise<string> {
  const r = await cliInProcess(['session', 'create', '--agent', 'demo'], { home: root });
  assert.equal(r.code, 0, r.stderr);
  return r.stdout.trim();
}

test('pause and resume append their events; a second pause and a resume of a session that is not paused say so, exit 0', async (t) => {
  const { root } = tempHome(t);
  const id = await create(root);
  const p = await cliInProcess(['pause', id, '--reason', 'lunch', '--json'], { home: root });
  assert.equal(p.code, 0, p.stderr);
  assert.equal(JSON.parse(p.stdout).type, 'user.pause');
  const again = await cliInProcess(['pause', id], { home: root });
  assert.equal(again.code, 0, again.stderr);
  assert.match(again.stderr, /already paused .*lunch.*nothing changed/);

  const r = await cliInProcess(['resume', id], { home: root });
  assert.equal(r.code, 0, r.stderr);
  assert.doesNotMatch(r.stderr, /was not paused/);
  const r2 = await cliInProcess(['resume', id], { home: root });
  assert.equal(r2.code, 0, r2.stderr);
  assert.match(r2.stderr, /was not paused; nothing changed/);
  const types = fs.readFileSync(path.join(root, 'sessions', id, 'events.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l).type);
  assert.deepEqual(types.slice(1), ['user.pause', 'user.pause', 'user.resume', 'user.resume']);

  const ev = await cliInProcess(['events', id], { home: root });
  assert.equal(ev.code, 0, ev.stderr);
  assert.match(ev.stdout, /user\.pause.*lunch/);
  assert.doesNotMatch(ev.stdout, /pending/, 'a pause applies where it sits: never pending');
});

test('status and sessions show a paused session; sessions --status paused lists only those; send warns that the message waits', async (t) => {
  const { root } = tempHome(t);
  const paused = await create(root);
  const other = await create(root);
  assert.equal((await cliInProcess(['pause', paused, '--reason', 'reviewing'], { home: root })).code, 0);

  const st = await cliInProcess(['status', paused], { home: root });
  assert.equal(st.code, 0, st.stderr);
  assert.match(st.stdout, /^paused\s+since \S+: reviewing; no run starts until openboa resume/m);
  const stj = JSON.parse((await cliInProcess(['status', paused, '--json'], { home: root })).stdout);
  assert.equal(stj.paused.reason, 'reviewing');
  assert.equal(stj.status, 'idle', 'the status field keeps its values');
  const otherJson = JSON.parse((await cliInProcess(['status', other, '--json'], { home: root })).stdout);
  assert.equal(otherJson.paused, null);

  const list = await cliInProcess(['sessions'], { home: root });
  assert.match(list.stdout, new RegExp(`${paused}.*idle \\(paused\\)`));
  assert.doesNotMatch(list.stdout, new RegExp(`${other}.*paused`));
  const only = await cliInProcess(['sessions', '--status', 'paused', '--json'], { home: root });
  const rows = only.stdout.trim().split('\n').map((l) => JSON.parse(l));
  assert.deepEqual(rows.map((r) => r.id), [paused]);
  assert.equal(rows[0].paused.reason, 'reviewing');
  const idle = await cliInProcess(['sessions', '--status', 'idle', '--json'], { home: root });
  assert.equal(idle.stdout.trim().split('\n').length, 2, 'a paused session is still idle');

  const sent = await cliInProcess(['send', paused, 'hello'], { home: root });
  assert.equal(sent.code, 0, sent.stderr);
  assert.match(sent.stderr, /is paused .*reviewing.*the message waits until openboa resume/);
  const sentOther = await cliInProcess(['send', other, 'hello'], { home: root });
  assert.doesNotMatch(sentOther.stderr, /paused/);

  const w = await cliInProcess(['wake', paused, '--json'], { home: root });
  assert.equal(w.code, 0, w.stderr);
  assert.equal(JSON.parse(w.stdout).skip_reason, 'paused');
});
