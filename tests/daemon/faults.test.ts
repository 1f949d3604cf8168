/**
 * Fault tests with real daemon processes: kill -9 mid-run, two daemons on one
 * home, a revisit firing on time, SIGTERM.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { execSync } from 'node:child_process';
import { tempHome, whenExists } from '../helpers/home.js';
import { writeAgent, textOf, NO_SHELL } from '../helpers/run.js';
import { startFakeAnthropic, type Step } from '../helpers/fake-anthropic.js';
import { spawnDaemon } from '../helpers/daemon-process.js';
import { cli } from '../helpers/cli.js';
import { validateLog } from '../helpers/event-schema.js';

async function setup(t: import('node:test').TestContext, steps: Step[]) {
  const h = tempHome(t);
  const fake = await startFakeAnthropic(steps);
  t.after(() => fake.close());
  writeAgent(h, 'test');
  const env = { ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: fake.url };
  const newSession = async (msg?: string) => {
    const id = (await cli(['session', 'create', '--agent', 'test'], { home: h.root })).stdout.trim();
    if (msg) await cli(['send', id, msg], { home: h.root });
    return id;
  };
  const log = (id: string) => fs.readFileSync(path.join(h.root, 'sessions', id, 'events.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  return { h, fake, env, newSession, log };
}

test('kill -9 during a model call: the restarted daemon resumes, and the message enters the conversation once', { timeout: 300_000 }, async (t) => {
  const s = await setup(t, [{ hang: true }, { text: 'resumed' }]);
  const id = await s.newSession('what is 2+2?');
  const d1 = spawnDaemon(t, s.h.root, s.env);
  await s.fake.waitForRequests(1);
  await d1.kill9();
  const before = s.log(id);
  assert.equal(before[before.length - 1].type, 'span.model_request_start', 'the log ends mid-call');
  assert.ok(fs.existsSync(path.join(s.h.root, 'sessions', id, 'lease.lock')), 'the dead daemon left its lease');
  const d2 = spawnDaemon(t, s.h.root, s.env);
  const end = await d2.line((l) => l.kind === 'run_end' && l.session_id === id);
  assert.equal(end.trigger, 'recovery');
  assert.deepEqual(end.stop_reason, { type: 'end_turn' });
  assert.deepEqual(s.fake.requests[1]!.body.messages, [{ role: 'user', content: [{ type: 'text', text: 'what is 2+2?' }] }]);
  const after = s.log(id);
  const running = after.filter((e) => e.type === 'session.status_running');
  assert.equal(running.length, 2);
  assert.deepEqual(running[1].processed_event_ids, []);
  assert.equal(after[after.length - 1].type, 'session.status_idle');
  assert.deepEqual(validateLog(path.join(s.h.root, 'sessions', id, 'events.jsonl')).errors, []);
  assert.equal(await d2.term(), 0);
});

test('kill -9 during a shell command: the tool is closed as an error and not run again', { skip: NO_SHELL, timeout: 300_000 }, async (t) => {
  const marker = `ob-fault-${process.pid}-${Date.now()}`;
  const s = await setup(t, [
    // A relative path: the shell starts in the workspace under every isolation (under bwrap that is /workspace).
    { toolUses: [{ id: 'toolu_slow', name: 'bash', input: { command: `echo ran >> count.txt; exec -a ${marker} sleep 60` } }] },
    { text: 'I could not tell whether it finished.' },
  ]);
  const id = await s.newSession('count once');
  const count = path.join(s.h.root, 'sessions', id, 'workspace', 'count.txt');
  const d1 = spawnDaemon(t, s.h.root, s.env);
  await whenExists(count, (text) => text === 'ran\n');
  await d1.kill9();
  // The kernel tears the sandbox down after its parent died (bwrap --die-with-parent); give a loaded machine a moment.
  const alive = () => execSync(`pgrep -f '[${marker[0]}]${marker.slice(1)}' || true`).toString().trim();
  for (let i = 0; i < 50 && alive() !== ''; i++) await new Promise((r) => setTimeout(r, 100));
  assert.equal(alive(), '', 'the sandbox died with the daemon');
  const d2 = spawnDaemon(t, s.h.root, s.env);
  const end = await d2.line((l) => l.kind === 'run_end' && l.session_id === id);
  assert.equal(end.trigger, 'recovery');
  assert.equal(fs.readFileSync(count, 'utf8'), 'ran\n', 'not run a second time');
  const result = s.log(id).find((e) => e.type === 'agent.tool_result');
  assert.equal(result.is_error, true);
  assert.match(result.content[0].text, /^outcome unknown/);
  const toolResults = s.fake.requests[1]!.body.messages[2]!.content as Array<Record<string, unknown>>;
  assert.equal(toolResults[0]!.tool_use_id, 'toolu_slow');
  assert.equal(toolResults[0]!.is_error, true);
});

test('two daemons on one home and many sessions: each message is answered exactly once', { timeout: 300_000 }, async (t) => {
  const N = 12;
  const s = await setup(t, Array.from({ length: N }, (_, i) => ({ text: `answer ${i}`, delayMs: 5 })));
  const ids = await Promise.all(Array.from({ length: N }, () => s.newSession()));
  const a = spawnDaemon(t, s.h.root, s.env, ['--concurrency', '3', '--allow-multiple']);
  const b = spawnDaemon(t, s.h.root, s.env, ['--concurrency', '3', '--allow-multiple']);
  await a.line((l) => l.kind === 'daemon_started');
  await b.line((l) => l.kind === 'daemon_started');
  for (const id of ids) fs.appendFileSync(path.join(s.h.root, 'sessions', id, 'events.jsonl'), `{"type":"user.message","content":"question for ${id}"}\n`);
  const ends = () => [...a.lines, ...b.lines].filter((l) => l.kind === 'run_end');
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`only ${ends().length} runs ended`)), 45_000);
    const check = () => {
      if (ends().length >= N) {
        clearTimeout(timer);
        resolve();
      } else setTimeout(check, 50);
    };
    check();
  });
  assert.equal(s.fake.requests.length, N, 'one model call per message');
  assert.equal(s.fake.unexpected, 0);
  for (const id of ids) {
    const ev = s.log(id);
    assert.equal(ev.filter((e) => e.type === 'session.status_running').length, 1, id);
    assert.equal(ev.filter((e) => e.type === 'agent.message').length, 1, id);
  }
  const byDaemon = [a, b].map((d) => d.lines.filter((l) => l.kind === 'run_end').length);
  assert.equal(byDaemon[0]! + byDaemon[1]!, N);
  const asked = s.fake.requests.map((r) => textOf(r.body.messages[0]!.content));
  assert.equal(new Set(asked).size, N, 'no message was asked twice');
  assert.equal(await a.term(), 0);
  assert.equal(await b.term(), 0);
});

test('a revisit the agent schedules fires on time and is consumed once', { timeout: 300_000 }, async (t) => {
  const s = await setup(t, [
    { toolUses: [{ id: 'toolu_w', name: 'schedule_wake', input: { delay_seconds: 1.5, reason: 'check the oven' } }] },
    { text: 'I will check back.' },
    { text: 'The oven is fine.' },
  ]);
  const id = await s.newSession('bake something');
  const d = spawnDaemon(t, s.h.root, s.env);
  const revisit = await d.line((l) => l.kind === 'run_start' && l.trigger === 'wake_queue' && l.session_id === id);
  const queue = fs.readFileSync(path.join(s.h.root, 'sessions', id, 'wake-queue.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  const scheduled = queue.find((q) => q.type === 'wake.scheduled');
  const late = Date.parse(String(revisit.at)) - Date.parse(scheduled.due_at);
  assert.ok(late >= 0 && late < 500, `fired ${late} ms after due_at`);
  await d.line((l) => l.kind === 'run_end' && l.trigger === 'wake_queue');
  const q2 = fs.readFileSync(path.join(s.h.root, 'sessions', id, 'wake-queue.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  assert.equal(q2.filter((q) => q.type === 'wake.consumed' && q.wake_id === scheduled.id).length, 1);
  assert.match(JSON.stringify(s.fake.requests[2]!.body.messages), /check the oven/);
  assert.equal(await d.term(), 0);
});

test('SIGTERM stops the daemon within 5 s with exit 0, the cut run rescheduled', { timeout: 300_000 }, async (t) => {
  const s = await setup(t, [{ hang: true }]);
  const id = await s.newSession('take your time');
  const d = spawnDaemon(t, s.h.root, s.env);
  await s.fake.waitForRequests(1);
  const t0 = Date.now();
  assert.equal(await d.term(), 0);
  assert.ok(Date.now() - t0 < 5000, `${Date.now() - t0} ms`);
  const ev = s.log(id);
  assert.equal(ev[ev.length - 1].type, 'session.status_rescheduled');
  assert.equal(ev[ev.length - 1].reason, 'shutdown');
  assert.equal(fs.existsSync(path.join(s.h.root, 'sessions', id, 'lease.lock')), false);
});

test('one daemon per home: a second is refused with exit 4 and who holds it; a killed one does not block the next', { timeout: 300_000 }, async (t) => {
  const s = await setup(t, []);
  const first = spawnDaemon(t, s.h.root, s.env);
  await first.line((l) => l.kind === 'daemon_started');
  const second = spawnDaemon(t, s.h.root, s.env);
  assert.equal(await second.exited, 4);
  assert.match(second.stderr(), new RegExp(`another daemon \\(pid ${first.child.pid} on [^,]+, since [^)]+\\) is already running on this home`));
  assert.equal(second.lines.filter((l) => l.kind === 'daemon_started').length, 0);
  // the pid file of a daemon killed with -9 is stale: the next start takes over at once
  await first.kill9();
  const third = spawnDaemon(t, s.h.root, s.env);
  await third.line((l) => l.kind === 'daemon_started', 5_000);
  assert.equal(await third.term(), 0);
});
