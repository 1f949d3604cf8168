import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { cli, cliInProcess } from '../helpers/cli.js';
import { tempHome } from '../helpers/home.js';

const logOf = (home: string, id: string) =>
  fs
    .readFileSync(path.join(home, 'sessions', id, 'events.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));

async function newSession(home: string, extra: string[] = []) {
  const r = await cliInProcess(['session', 'create', '--agent', 'demo', ...extra], { home });
  assert.equal(r.code, 0, r.stderr);
  return r.stdout.trim();
}

test('session create prints the id; sessions and status show it', async (t) => {
  const { root } = tempHome(t);
  const id = await newSession(root, ['--title', 'first try']);
  assert.ok(fs.existsSync(path.join(root, 'sessions', id, 'events.jsonl')));
  const list = await cliInProcess(['sessions'], { home: root });
  assert.equal(list.code, 0);
  assert.match(list.stdout, new RegExp(`${id}\\s+demo\\s+idle`));
  assert.match(list.stdout, /first try/);
  const json = await cliInProcess(['sessions', '--json'], { home: root });
  assert.deepEqual(
    json.stdout.trim().split('\n').map((l) => JSON.parse(l).id),
    [id],
  );
  const st = await cliInProcess(['status', id, '--json'], { home: root });
  assert.equal(st.code, 0);
  const s = JSON.parse(st.stdout);
  assert.equal(s.status, 'idle');
  assert.equal(s.lease.held, false);
  assert.equal(s.agent_id, 'demo');
});

test('OPENBOA_HOME selects the home; --home wins over it', async (t) => {
  const a = tempHome(t);
  const b = tempHome(t);
  const id = await newSession(a.root);
  // The binary, so main.ts's own environment and working directory are what is read.
  const viaEnv = await cli(['sessions', '--json'], { env: { OPENBOA_HOME: a.root }, cwd: b.root });
  assert.match(viaEnv.stdout, new RegExp(id));
  const viaFlag = await cli(['sessions', '--json'], { home: b.root, env: { OPENBOA_HOME: a.root } });
  assert.equal(viaFlag.stdout.trim(), '');
});

test('send appends a user.message in one line; "-" reads stdin; --lines sends each line', async (t) => {
  const { root } = tempHome(t);
  const id = await newSession(root);
  // The binary: "-" and --lines read a real stdin pipe to its end.
  const r = await cli(['send', id, 'hello', 'world'], { home: root });
  assert.equal(r.code, 0, r.stderr);
  const fromStdin = await cli(['send', id, '-'], { home: root, input: 'multi\nline\n' });
  assert.equal(fromStdin.code, 0);
  const many = await cli(['send', id, '--lines'], { home: root, input: 'a\n\nb\n' });
  assert.equal(many.stdout.trim().split('\n').length, 2);
  const log = logOf(root, id);
  assert.deepEqual(
    log.slice(1).map((e) => [e.type, e.content[0].text]),
    [
      ['user.message', 'hello world'],
      ['user.message', 'multi\nline'],
      ['user.message', 'a'],
      ['user.message', 'b'],
    ],
  );
  assert.equal(log[1].id, r.stdout.trim());
  assert.match(log[1].created_at, /^\d{4}-\d\d-\d\dT/);
});

test('events shows normalised lines, pending state, bad lines; --limit and --json', async (t) => {
  const { root } = tempHome(t);
  const id = await newSession(root);
  const f = path.join(root, 'sessions', id, 'events.jsonl');
  fs.appendFileSync(f, '{"type":"user.message","content":"by hand"}\n{oops\n');
  const r = await cliInProcess(['events', id], { home: root });
  assert.equal(r.code, 0, r.stderr);
  // The compact view leaves event ids out (they are in --full and --json), so the text fits the width.
  assert.match(r.stdout, /2 .*user\.message\s+by hand \(pending\)/);
  const full = await cliInProcess(['events', id, '--full'], { home: root });
  assert.match(full.stdout, /2 .*user\.message\s+sevt_line_2\s+by hand \(pending\)/);
  assert.match(r.stdout, /3\s+INVALID\s+events\.jsonl line 3: not valid JSON/);
  const last = await cliInProcess(['events', id, '--limit', '1', '--json'], { home: root });
  const rows = last.stdout.trim().split('\n').map((l) => JSON.parse(l));
  assert.equal(rows.length, 1);
  assert.equal(rows[0].line, 3);
  assert.equal(rows[0].invalid.code, 'invalid_event');
  const all = (await cliInProcess(['events', id, '--json'], { home: root })).stdout.trim().split('\n').map((l) => JSON.parse(l));
  assert.equal(all[1].event.id, 'sevt_line_2');
  assert.equal(all[1].event.processed_at, null);
  assert.deepEqual(all[1].event.content, [{ type: 'text', text: 'by hand' }]);
  assert.equal(all[0].event.processed_at, all[0].event.created_at);
});

test('events --follow prints lines appended after it started, and stops on SIGINT', async (t) => {
  const { root } = tempHome(t);
  const id = await newSession(root);
  const { spawn } = await import('node:child_process');
  const { CLI } = await import('../helpers/cli.js');
  const child = spawn(process.execPath, [CLI, '--home', root, 'events', id, '--follow', '--json']);
  let out = '';
  const seen = (needle: string) =>
    new Promise<void>((resolve) => {
      const check = () => {
        if (out.includes(needle)) {
          child.stdout.off('data', check);
          resolve();
        }
      };
      child.stdout.on('data', (d) => {
        out += d;
      });
      child.stdout.on('data', check);
      check();
    });
  await seen('session.created');
  fs.appendFileSync(path.join(root, 'sessions', id, 'events.jsonl'), '{"type":"user.message","content":"live"}\n');
  await seen('"live"');
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  child.kill('SIGINT');
  assert.equal(await exited, 0);
});

test('schedule --in and --at append wake.scheduled; wakes folds the queue', async (t) => {
  const { root } = tempHome(t);
  const id = await newSession(root);
  const a = await cliInProcess(['schedule', id, '--in', '10m', '--reason', 'check the build'], { home: root });
  assert.equal(a.code, 0, a.stderr);
  const b = await cliInProcess(['schedule', id, '--at', '2030-01-01T00:00:00Z', '--json'], { home: root });
  assert.equal(b.code, 0, b.stderr);
  const rec = JSON.parse(b.stdout);
  assert.equal(rec.type, 'wake.scheduled');
  assert.equal(rec.due_at, '2030-01-01T00:00:00.000Z');
  assert.equal(rec.source, 'cli');
  const q = fs.readFileSync(path.join(root, 'sessions', id, 'wake-queue.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  assert.equal(q.length, 2);
  assert.equal(q[0].reason, 'check the build');
  const due = Date.parse(q[0].due_at) - Date.parse(q[0].created_at);
  assert.ok(Math.abs(due - 600_000) < 1000, `due ${due} ms after creation`);
  fs.appendFileSync(path.join(root, 'sessions', id, 'wake-queue.jsonl'), `{"type":"wake.cancelled","wake_id":"${rec.id}","reason":"changed my mind","at":"2026-11-21T10:00:00Z"}\n`);
  const w = await cliInProcess(['wakes', id, '--json'], { home: root });
  const rows = JSON.parse(w.stdout) as Array<{ state: string; cancel_reason: string }>;
  assert.deepEqual(rows.map((r) => r.state), ['pending', 'cancelled']);
  assert.equal(rows[1]!.cancel_reason, 'changed my mind');
  const st = JSON.parse((await cliInProcess(['status', id, '--json'], { home: root })).stdout);
  assert.equal(st.next_wake_at, q[0].due_at);
});

test('exit codes: unknown session 3, unknown agent 3, missing argument 2, bad --in 2, bad --at 2, unknown command 2', async (t) => {
  const { root } = tempHome(t);
  const id = await newSession(root);
  const cases: Array<[string[], number, RegExp]> = [
    [['status', '019a0000-0000-7000-8000-000000000000'], 3, /session 019a0000-0000-7000-8000-000000000000 not found/],
    [['send', 'not-a-session', 'hi'], 3, /session "not-a-session" not found/],
    [['session', 'create', '--agent', 'ghost'], 3, /agent "ghost" not found: agents\/ghost\/agent\.yaml does not exist/],
    [['session', 'create', '--agent', 'demo', '--env', 'ghost'], 3, /environment "ghost" not found/],
    [['session', 'create'], 2, /missing --agent/],
    [['send', id], 2, /missing argument <text>/],
    [['send'], 2, /missing argument <id>/],
    [['schedule', id, '--in', 'soonish'], 2, /--in "soonish" is not a duration/],
    [['schedule', id, '--at', 'tomorrow'], 2, /--at "tomorrow" is not an ISO time/],
    [['schedule', id], 2, /exactly one of --in/],
    [['events', id, '--limit', 'x'], 2, /--limit "x" is not a whole number/],
    [['status', id, '--bogus'], 2, /unknown option "--bogus" for status/],
    [['frobnicate'], 2, /unknown command "frobnicate"/],
  ];
  for (const [args, code, re] of cases) {
    const r = await cliInProcess(args, { home: root });
    assert.equal(r.code, code, `${args.join(' ')} → ${r.code}: ${r.stderr}`);
    assert.match(r.stderr, re, args.join(' '));
    assert.equal(r.stderr.trim().split('\n').length, 1, `one line on stderr for ${args.join(' ')}`);
    assert.equal(r.stdout, '');
  }
});

test('a bad agent.yaml is exit 2 with the file and field', async (t) => {
  const h = tempHome(t);
  h.write('agents/broken/agent.yaml', 'limits:\n  max_model_requests_per_wake: many\n');
  const r = await cliInProcess(['session', 'create', '--agent', 'broken'], { home: h.root });
  assert.equal(r.code, 2);
  assert.match(r.stderr, /agents\/broken\/agent\.yaml:2: limits\.max_model_requests_per_wake: .*expected number/);
});

test('--json errors are {"error":{"code","message"}} on stderr', async (t) => {
  const { root } = tempHome(t);
  // The binary: the exit code is the process's own (main.ts), not runCli's return value.
  const r = await cli(['status', '019a0000-0000-7000-8000-000000000000', '--json'], { home: root });
  assert.equal(r.code, 3);
  const err = JSON.parse(r.stderr);
  assert.equal(err.error.code, 'not_found');
  assert.match(err.error.message, /not found/);
  const u = await cli(['send', '--json'], { home: root });
  assert.equal(u.code, 2);
  assert.equal(JSON.parse(u.stderr).error.code, 'usage');
});

test('a session folder without session.json is rebuilt, not an error', async (t) => {
  const { root } = tempHome(t);
  const id = await newSession(root);
  await cliInProcess(['send', id, 'hi'], { home: root });
  fs.rmSync(path.join(root, 'sessions', id, 'session.json'));
  const r = await cliInProcess(['status', id, '--json'], { home: root });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(JSON.parse(r.stdout).pending_events.length, 1);
  assert.ok(fs.existsSync(path.join(root, 'sessions', id, 'session.json')));
});

test('--help works on every level', async (t) => {
  const { root } = tempHome(t);
  const top = await cliInProcess(['--help'], { home: root });
  assert.equal(top.code, 0);
  for (const c of ['session create', 'sessions', 'status', 'send', 'events', 'schedule', 'wakes']) assert.match(top.stdout, new RegExp(`\\n  ${c} `));
  const group = await cliInProcess(['session', '--help'], { home: root });
  assert.equal(group.code, 0);
  assert.match(group.stdout, /session create/);
  for (const c of [['session', 'create'], ['sessions'], ['status'], ['send'], ['events'], ['schedule'], ['wakes']]) {
    const r = await cliInProcess([...c, '--help'], { home: root });
    assert.equal(r.code, 0, c.join(' '));
    assert.match(r.stdout, new RegExp(`^usage: openboa ${c.join(' ')}`));
  }
  const none = await cliInProcess([], { home: root });
  assert.equal(none.code, 0);
  assert.match(none.stdout, /^openboa \d/);
});
