import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { bench, writeAgent, NO_SHELL } from '../helpers/run.js';
import { cli } from '../helpers/cli.js';

const SECRET = 'sk-test-0123456789-very-secret';

test('a secret reaches the sandbox but never a file, the model or the terminal', { skip: NO_SHELL }, async (t) => {
  const b = await bench(t, {
    steps: [
      { toolUses: [{ id: 'toolu_1', name: 'bash', input: { command: 'echo "token=$API_TOKEN"; echo "$API_TOKEN" > token.txt; echo "$API_TOKEN" >&2' } }] },
      { text: 'I used the token.' },
    ],
    env: { OPENBOA_TEST_SECRET: SECRET },
  });
  b.h.write('environments/secret.yaml', 'env:\n  API_TOKEN: { secret: { env: OPENBOA_TEST_SECRET } }\n  PLAIN: visible\n');
  writeAgent(b.h, 'test', { environment: 'secret' });
  const id = b.session('use the token');
  await b.wake(id);
  const ws = b.store.paths(id).workspace;
  assert.equal(fs.readFileSync(path.join(ws, 'token.txt'), 'utf8').trim(), SECRET, 'the sandbox had the real value');
  const sent = JSON.stringify(b.fake.requests.map((r) => r.body));
  assert.ok(!sent.includes(SECRET), 'the model never saw it');
  assert.match(sent, /token=\[REDACTED:API_TOKEN\]/);
  const leaks = b.allFiles().filter((f) => !f.file.startsWith(ws) && f.text.includes(SECRET));
  assert.deepEqual(leaks.map((f) => path.relative(b.h.root, f.file)), [], 'no file outside the workspace holds it');
  const vaults = JSON.parse(fs.readFileSync(path.join(b.store.paths(id).runtime, 'vaults.json'), 'utf8'));
  assert.deepEqual(vaults.secrets, ['API_TOKEN']);
  assert.match(fs.readFileSync(path.join(b.store.paths(id).runtime, 'last-shell-output.txt'), 'utf8'), /token=\[REDACTED:API_TOKEN\]/);
  // the terminal: events and status print only what the log holds
  for (const args of [['events', id], ['events', id, '--json'], ['status', id]]) {
    const r = await cli(args, { home: b.h.root, env: { OPENBOA_TEST_SECRET: SECRET } });
    assert.equal(r.code, 0);
    assert.ok(!r.stdout.includes(SECRET) && !r.stderr.includes(SECRET), args.join(' '));
  }
});

test('a secret whose variable is unset is reported, and the shell runs without it', { skip: NO_SHELL }, async (t) => {
  const b = await bench(t, { steps: [{ toolUses: [{ id: 'toolu_1', name: 'bash', input: { command: 'echo "[${API_TOKEN:-unset}]"' } }] }, { text: 'ok' }] });
  b.h.write('environments/secret.yaml', 'env:\n  API_TOKEN: { secret: { env: OPENBOA_NOT_SET_ANYWHERE } }\n');
  writeAgent(b.h, 'test', { environment: 'secret' });
  const id = b.session('go');
  await b.wake(id);
  const err = b.events(id).find((e) => e.type === 'session.error');
  assert.equal(err?.type === 'session.error' && err.error.code, 'missing_secret');
  assert.match(JSON.stringify(b.fake.requests[1]!.body.messages), /\[unset\]/);
});

test('the sandbox gets OPENBOA_SESSION_ID, _AGENT_ID, _WAKE_ID and _WAKE_REASON', { skip: NO_SHELL }, async (t) => {
  const b = await bench(t, { steps: [{ toolUses: [{ id: 'toolu_1', name: 'bash', input: { command: 'echo "$OPENBOA_SESSION_ID|$OPENBOA_AGENT_ID|$OPENBOA_WAKE_ID|$OPENBOA_WAKE_REASON"' } }] }, { text: 'ok' }] });
  const id = b.session('who am i');
  const r = await b.wake(id);
  const out = JSON.stringify(b.fake.requests[1]!.body.messages);
  assert.ok(out.includes(`${id}|test|${r.wake_id}|1 new event(s): user.message`), out);
});

test('a lease lost mid-run (onCompromised) stops the run cleanly; the process does not crash', async (t) => {
  const b = await bench(t, { steps: [{ hang: true }] });
  const id = b.session('slow');
  const p = b.store.paths(id);
  const running = b.wake(id, { leaseStaleMs: 2000 });
  await b.fake.waitForRequests(1);
  const before = fs.readFileSync(p.events, 'utf8').split('\n').length;
  // Another process "takes over": the lock directory is replaced under the holder.
  fs.rmSync(p.lease, { recursive: true });
  fs.mkdirSync(p.lease);
  const r = await running; // proper-lockfile notices on its next refresh (stale / 2)
  assert.equal(r.outcome, 'executed');
  assert.equal(fs.readFileSync(p.events, 'utf8').split('\n').length, before, 'nothing more was written after the lease was lost');
  assert.ok(fs.existsSync(p.lease), "the new holder's lock is left alone");
  await b.fake.closed(0);
  assert.equal(b.fake.requests[0]!.aborted, true, 'the model call was aborted');
});
