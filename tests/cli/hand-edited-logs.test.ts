/** Hand-edited logs: lines that must never make a session unreadable or invisible, and what the terminal may show of them. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { cliInProcess } from '../helpers/cli.js';
import { tempHome } from '../helpers/home.js';
import { bench } from '../helpers/run.js';
import { startDaemon } from '../helpers/daemon.js';
import { TAIL_GRACE_MS } from '../../src/core/store/jsonl.js';

async function session(root: string) {
  return (await cliInProcess(['session', 'create', '--agent', 'demo'], { home: root })).stdout.trim();
}

test('a revisit too far in the future is a bad line, not an unreadable session', async (t) => {
  const { root } = tempHome(t);
  const id = await session(root);
  fs.appendFileSync(path.join(root, 'sessions', id, 'wake-queue.jsonl'), '{"delay_seconds":1e13,"reason":"far"}\n{"due_at":"+275760-09-13T00:00:00.001Z","reason":"beyond"}\n');
  const st = await cliInProcess(['status', id], { home: root });
  assert.equal(st.code, 0, st.stderr);
  assert.match(st.stdout, /wake-queue\.jsonl line 1: .*delay_seconds: expected at most ten years/);
  const w = await cliInProcess(['wakes', id], { home: root });
  assert.equal(w.code, 0, w.stderr);
  const far = await cliInProcess(['schedule', id, '--in', '99999999d'], { home: root });
  assert.equal(far.code, 2);
  assert.match(far.stderr, /--in must be at most ten years/);
});

test('words past the declared arguments are refused, not dropped', async (t) => {
  const { root } = tempHome(t);
  const id = await session(root);
  const r = await cliInProcess(['interrupt', id, 'because', 'reasons'], { home: root });
  assert.equal(r.code, 2);
  assert.match(r.stderr, /unexpected argument "because"/);
  assert.equal((await cliInProcess(['send', id, 'several', 'words', 'are', 'fine'], { home: root })).code, 0);
});

test('a saved offset that no longer ends a line makes the fold start over instead of reading from mid-line', async (t) => {
  const { root } = tempHome(t);
  const id = await session(root);
  const f = path.join(root, 'sessions', id, 'events.jsonl');
  await cliInProcess(['send', id, 'first'], { home: root });
  await cliInProcess(['status', id], { home: root }); // session.json now ends at the end of line 2
  // the file rewritten in place (same inode) with a longer second line
  const lines = fs.readFileSync(f, 'utf8').split('\n');
  const fd = fs.openSync(f, 'r+');
  fs.writeSync(fd, `${lines[0]}\n${JSON.stringify({ type: 'user.message', content: `a much longer first message ${'z'.repeat(50)}` })}\n`, 0);
  fs.closeSync(fd);
  const st = JSON.parse((await cliInProcess(['status', id, '--json'], { home: root })).stdout);
  assert.equal(st.pending_events.length, 1);
  assert.deepEqual(st.rejected ?? [], []);
  assert.equal(st.counts.unreported_errors, 0);
});

test('a last line without its newline shows in status, and the daemon seals and delivers it after the grace period', async (t) => {
  const b = await bench(t, { steps: [{ text: 'got it' }] });
  const id = b.session();
  const td = await startDaemon(t, b);
  fs.appendFileSync(b.store.paths(id).events, '{"type":"user.message","content":"printf forgot the newline"}');
  const st = await cliInProcess(['status', id], { home: b.h.root });
  assert.match(st.stdout, /unfinished \d+ byte\(s\) at the end of events\.jsonl have no final newline yet/);
  // The daemon arms its grace period on the manual clock when it sees the line; move time past it.
  await b.deps.clock.armed(TAIL_GRACE_MS);
  assert.equal(td.d.runsCompleted, 0, 'nothing runs before the grace period');
  await b.deps.clock.advance(TAIL_GRACE_MS);
  const r = await td.result((x) => x.session_id === id && x.outcome === 'executed', 10_000);
  assert.deepEqual(r.stop_reason, { type: 'end_turn' });
  assert.match(JSON.stringify(b.fake.requests[0]!.body.messages), /printf forgot the newline/);
});

test('the CLI hides a session secret that a hand-written line contains', async (t) => {
  const { root, write } = tempHome(t);
  write('environments/local.yaml', 'env:\n  TOKEN: { secret: { env: OB_TEST_TOKEN } }\n');
  const id = await session(root);
  fs.appendFileSync(path.join(root, 'sessions', id, 'events.jsonl'), '{"type":"user.message","content":"my token is hunter2-secret-value"}\n{"type":"nope","leak":"hunter2-secret-value"}\n');
  const env = { OB_TEST_TOKEN: 'hunter2-secret-value' };
  for (const args of [['events', id], ['events', id, '--json'], ['status', id]]) {
    const r = await cliInProcess(args, { home: root, env });
    assert.equal(r.code, 0, r.stderr);
    assert.ok(!r.stdout.includes('hunter2-secret-value'), args.join(' '));
    if (args[0] === 'events') assert.match(r.stdout, /\[REDACTED:TOKEN\]/);
  }
});

test('a log of a newer format than this openboa reads is refused with its own error code, and still listed', async (t) => {
  const { root } = tempHome(t);
  const id = await session(root);
  const file = path.join(root, 'sessions', id, 'events.jsonl');
  const [first, ...rest] = fs.readFileSync(file, 'utf8').split('\n');
  fs.writeFileSync(file, [JSON.stringify({ ...JSON.parse(first!), format: 99 }), ...rest].join('\n'));
  const st = await cliInProcess(['status', id, '--json'], { home: root });
  assert.equal(st.code, 1);
  assert.equal(JSON.parse(st.stderr).error.code, 'unsupported_log_format');
  assert.match(JSON.parse(st.stderr).error.message, /log format 99, newer than this version of openboa reads/);
  const list = await cliInProcess(['sessions', '--json'], { home: root });
  assert.equal(list.code, 0, list.stderr);
  assert.match(JSON.parse(list.stdout).error, /log format 99/);
});

test('a line without created_at shows one time on every read: the time recorded for it, its report\'s, or "(no time)", never the time of the read', async (t) => {
  const b = await bench(t, { steps: [{ text: 'hi' }] });
  const id = b.session();
  const log = b.store.paths(id).events;
  fs.appendFileSync(log, '{"type":"agent.message","content":[{"type":"text","text":"forged"}]}\n{"type":"user.message","content":"no time"}\n');
  const json = async () => (await cliInProcess(['events', id, '--json'], { home: b.h.root })).stdout.trim().split('\n').map((l) => JSON.parse(l));
  const [before] = (await json()).slice(-2);
  assert.equal(before.undated, true, 'the forged line: no time was ever recorded for it');
  const text = await cliInProcess(['events', id], { home: b.h.root });
  assert.match(text.stdout, /\(no time\) +agent\.message +forged/);

  await b.wake(id); // takes the message in (its time pinned) and reports the forged line (the report's time)
  const first = await json();
  const second = await json();
  const pick = (rows: Array<{ line: number; created_at: string; undated?: true }>, line: number) => rows.find((r) => r.line === line)!;
  for (const line of [2, 3]) {
    assert.equal(pick(first, line).undated, undefined, `line ${line}`);
    assert.equal(pick(first, line).created_at, pick(second, line).created_at, `line ${line} shows the same time on every read`);
  }
});
