import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { cli, cliInProcess } from '../helpers/cli.js';
import { tempHome } from '../helpers/home.js';
import { validateLog } from '../helpers/event-schema.js';
import { acquireLease } from '../../src/core/foundation/lease.js';
import { sessionPaths } from '../../src/core/foundation/home.js';
import { probeCapabilities } from '../../src/core/sandbox/isolation.js';
import { NO_SHELL } from '../helpers/run.js';

test('openboa wake on a demo session runs the whole loop offline: bash in the sandbox, a file written, a revisit scheduled', { skip: NO_SHELL }, async (t) => {
  const { root } = tempHome(t);
  const id = (await cliInProcess(['session', 'create', '--agent', 'demo'], { home: root })).stdout.trim();
  await cliInProcess(['send', id, 'hello'], { home: root });
  // The binary: a whole run, sandbox included, from a process of its own.
  const r = await cli(['wake', id], { home: root, env: { ANTHROPIC_API_KEY: '' } });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /manual: idle, end_turn/);
  assert.match(r.stdout, /scheduled: wake_/);
  const dir = path.join(root, 'sessions', id);
  assert.match(fs.readFileSync(path.join(dir, 'workspace', 'notes.md'), 'utf8'), /First visit/);
  const queue = fs.readFileSync(path.join(dir, 'wake-queue.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  assert.equal(queue[0].type, 'wake.scheduled');
  assert.equal(queue[0].source, 'agent');
  const log = fs.readFileSync(path.join(dir, 'events.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  const bash = log.find((e) => e.type === 'agent.tool_use' && e.name === 'bash');
  const result = log.find((e) => e.type === 'agent.tool_result' && e.tool_use_id === bash.id);
  // The shell starts in the workspace: /workspace under bubblewrap, its host path when the shell runs on the host.
  const caps = probeCapabilities();
  const ws = caps.bwrap ? '/workspace' : path.join(dir, 'workspace');
  assert.ok(result.content[0].text.startsWith(`I am demo in session ${id}\n${ws}\n`), result.content[0].text);
  assert.equal(result.is_error, false);
  const env = JSON.parse(fs.readFileSync(path.join(dir, 'runtime', 'environment.json'), 'utf8'));
  assert.equal(env.isolation, caps.bwrap ? 'bwrap' : caps.unshare ? 'unshare-net' : 'unavailable');
  const v = validateLog(path.join(dir, 'events.jsonl'));
  assert.ok(v.checked >= 15);
  assert.deepEqual(v.errors, []);
  const json = await cliInProcess(['wake', id, '--json'], { home: root });
  assert.equal(JSON.parse(json.stdout).outcome, 'skipped');
});

test('openboa wake exits 4 while another process holds the lease', async (t) => {
  const { root } = tempHome(t);
  const id = (await cliInProcess(['session', 'create', '--agent', 'demo'], { home: root })).stdout.trim();
  await cliInProcess(['send', id, 'hello'], { home: root });
  const lease = await acquireLease(sessionPaths(path.join(root, 'sessions', id)), { purpose: 'test', nowIso: new Date().toISOString() });
  t.after(() => lease.release());
  // The binary: another process, and exit 4 as the process's own exit code.
  const r = await cli(['wake', id], { home: root });
  assert.equal(r.code, 4);
  assert.match(r.stderr, /is busy: its lease is held by pid/);
  const st = JSON.parse((await cliInProcess(['status', id, '--json'], { home: root })).stdout);
  assert.equal(st.lease.held, true);
  assert.equal(st.lease.owner.purpose, 'test');
});

test('openboa wake is refused while a daemon runs on the home (unless --force), and a key missing here never ends the retries', async (t) => {
  const { root } = tempHome(t);
  const id = (await cliInProcess(['session', 'create', '--agent', 'claude'], { home: root })).stdout.trim();
  await cliInProcess(['send', id, 'hello'], { home: root });
  const noKey = { ANTHROPIC_API_KEY: '', ANTHROPIC_AUTH_TOKEN: '' };
  // A process without the key: a failed attempt, retried later (by a process that has it), not an ending.
  const first = await cli(['wake', id], { home: root, env: noKey });
  assert.equal(first.code, 1, first.stderr);
  assert.match(first.stderr, /^openboa: no API key: set ANTHROPIC_API_KEY/m);
  const after1 = JSON.parse((await cliInProcess(['status', id, '--json'], { home: root })).stdout);
  assert.equal(after1.status, 'rescheduling');
  assert.ok(after1.retry_at);

  // A daemon holds the home (its lock, as `openboa daemon` takes it): a manual wake is refused and writes nothing.
  const { lockHome } = await import('../../src/daemon/home-lock.js');
  const { Home } = await import('../../src/core/foundation/home.js');
  const { systemClock } = await import('../../src/core/foundation/clock.js');
  const lock = await lockHome(new Home(root), systemClock);
  t.after(() => lock.release());
  const log = () => fs.readFileSync(path.join(root, 'sessions', id, 'events.jsonl'), 'utf8');
  const before = log();
  const refused = await cli(['wake', id], { home: root, env: noKey });
  assert.equal(refused.code, 4, refused.stderr);
  assert.match(refused.stderr, new RegExp(`a daemon \\(pid ${process.pid}[^)]*\\) runs on this home and runs ${id} itself[^\\n]*pass --force`));
  assert.equal(log(), before);

  const forced = await cli(['wake', id, '--force'], { home: root, env: noKey });
  assert.equal(forced.code, 1, forced.stderr);
  const after2 = JSON.parse((await cliInProcess(['status', id, '--json'], { home: root })).stdout);
  assert.equal(after2.status, 'rescheduling', 'the retries go on: the daemon, which has the key, runs it next');
  assert.ok(after2.retry_at);
  assert.notEqual(after2.stop_reason?.type, 'retries_exhausted');
});
