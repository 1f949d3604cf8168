/**
 * `openboa archive` and `openboa delete`: an archived session is kept,
 * hidden and never woken, even by what is appended to it; a deleted one is
 * gone, and a run holding it refuses the delete.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { cliInProcess } from '../helpers/cli.js';
import { bench } from '../helpers/run.js';
import { startDaemon } from '../helpers/daemon.js';
import { acquireLease } from '../../src/core/foundation/lease.js';
import { archiveSession } from '../../src/core/ops/session-lifecycle.js';
import { runIdAfter } from '../../src/core/foundation/ids.js';

test('an archived session is hidden from sessions, never woken by what is appended, says so in status and send; --undo wakes it with what waited', async (t) => {
  const b = await bench(t, { steps: [{ text: 'first answer' }, { text: 'after the archive' }] });
  const id = b.session('hello');
  const other = b.session();
  const td = await startDaemon(t, b);
  await td.result((r) => r.session_id === id && r.stop_reason?.type === 'end_turn');

  const a = await cliInProcess(['archive', id, '--json'], { home: b.h.root });
  assert.equal(a.code, 0, a.stderr);
  assert.equal(JSON.parse(a.stdout).type, 'session.updated');
  const again = await cliInProcess(['archive', id], { home: b.h.root });
  assert.match(again.stdout, /was already archived \(since .*\); nothing changed/);

  const sent = await cliInProcess(['send', id, 'are you there?'], { home: b.h.root });
  assert.equal(sent.code, 0, sent.stderr);
  assert.match(sent.stderr, new RegExp(`session ${id} is archived \\(since [^)]+\\): the message is in its log, but no run takes it in until openboa archive ${id} --undo`));
  // The daemon looks (the line is a watcher event) and runs nothing: a message to the other session shows it kept looking.
  b.store.appendUserEvent(other, { type: 'user.message', content: 'ping' });
  await td.result((r) => r.session_id === other && r.outcome === 'executed');
  assert.equal(td.d.results.filter((r) => r.session_id === id && r.outcome === 'executed').length, 1, 'no run after the archive');
  assert.equal(b.store.snapshot(id).pending_events.length, 1);

  const list = await cliInProcess(['sessions'], { home: b.h.root });
  assert.doesNotMatch(list.stdout, new RegExp(id));
  assert.match(list.stdout, new RegExp(other));
  const all = await cliInProcess(['sessions', '--archived'], { home: b.h.root });
  assert.match(all.stdout, new RegExp(`${id}.*idle \\(archived\\)`));
  const st = await cliInProcess(['status', id], { home: b.h.root });
  assert.match(st.stdout, /^archived\s+since \S+; never woken until openboa archive \S+ --undo/m);

  const undo = await cliInProcess(['archive', id, '--undo'], { home: b.h.root });
  assert.equal(undo.code, 0, undo.stderr);
  const r = await td.result((x) => x.session_id === id && x.processed_event_ids.length === 1 && x.outcome === 'executed');
  assert.deepEqual(r.stop_reason, { type: 'end_turn' });
  assert.equal(b.store.snapshot(id).archived_at, null);
});

test('archive refuses a running session; delete refuses a session whose lease is held, asks for --yes without a terminal, and removes the folder', async (t) => {
  const b = await bench(t);
  const id = b.session('hello');
  // A run in progress, as the log says it (its opening line, with its proof).
  const runId = runIdAfter(b.deps.ids.run(), null);
  b.store.appendEvents(id, [{ type: 'session.status_running', wake_id: runId, trigger: 'manual', processed_event_ids: [] }], { wakeId: runId });
  assert.throws(() => archiveSession(b.store, id), /is running: interrupt it first/);
  const arch = await cliInProcess(['archive', id], { home: b.h.root });
  assert.equal(arch.code, 4, arch.stderr);

  const lease = await acquireLease(b.store.paths(id), { purpose: 'test', nowIso: new Date().toISOString() });
  const held = await cliInProcess(['delete', id, '--yes'], { home: b.h.root });
  assert.equal(held.code, 4, held.stderr);
  assert.match(held.stderr, /is running .*interrupt it, or wait for its run to end/);
  await lease.release();

  const noTty = await cliInProcess(['delete', id], { home: b.h.root });
  assert.equal(noTty.code, 2, noTty.stderr);
  assert.match(noTty.stderr, /pass --yes/);
  assert.ok(fs.existsSync(b.store.paths(id).dir));

  // What a kill -9 between a delete's rename and its removal leaves: never listed, removed by the next delete.
  const leftover = path.join(b.h.root, 'sessions', `.deleted-${id}-0badf00d`);
  fs.mkdirSync(path.join(leftover, 'workspace'), { recursive: true });
  const del = await cliInProcess(['delete', id.slice(-8), '--yes', '--json'], { home: b.h.root });
  assert.equal(del.code, 0, del.stderr);
  assert.deepEqual(JSON.parse(del.stdout), { id, deleted: true, notes: [] });
  assert.ok(!fs.existsSync(b.store.paths(id).dir));
  assert.deepEqual(fs.readdirSync(path.join(b.h.root, 'sessions')).filter((n) => n.startsWith('.deleted-')), []);
  const gone = await cliInProcess(['status', id], { home: b.h.root });
  assert.equal(gone.code, 3);
});

test('delete on a terminal: the question shows the session\'s title (an agent may have chosen it) with its control characters made visible', async (t) => {
  const pty = await import('node-pty');
  const { CLI } = await import('../helpers/cli.js');
  const { createSession } = await import('../../src/core/ops/create-session.js');
  const b = await bench(t);
  // A child's title is the spawning agent's: a return and an erase would make the question name another session.
  const id = createSession(b.store, { agent: 'test', title: 'scratch\r\u001b[2KDelete session 00000000 ("old notes"' }).id;
  const env: NodeJS.ProcessEnv = { ...process.env, TERM: 'xterm-256color' };
  delete env.OPENBOA_HOME;
  const p = pty.spawn(process.execPath, [CLI, '--home', b.h.root, 'delete', id], { name: 'xterm-256color', cols: 300, rows: 40, cwd: b.h.root, env: env as Record<string, string> });
  let out = '';
  const exited = new Promise<number>((resolve) => p.onExit(({ exitCode }) => resolve(exitCode)));
  p.onData((d) => {
    out += d;
    if (out.includes('[y/N]')) p.write('n\r');
  });
  assert.equal(await exited, 0, out);
  assert.ok(!out.includes('\r\u001b[2KDelete'), `no raw control sequence of the title's: ${JSON.stringify(out)}`);
  assert.ok(out.includes('scratch\\u000d\\u001b[2KDelete session 00000000'), JSON.stringify(out));
  assert.ok(fs.existsSync(b.store.paths(id).dir), 'nothing deleted');
});

test('delete removes a workspace nested deeper than PATH_MAX, with names that are not UTF-8 and symlinks out, and the next delete works too', async (t) => {
  const b = await bench(t);
  const outside = path.join(b.h.root, 'outside.txt');
  fs.writeFileSync(outside, 'keep me');
  const [deep, next] = [b.session(), b.session()];
  // What an agent's shell makes with one `cd` at a time: 40 levels of 200 characters, 8,000 bytes of path.
  const workspace = b.store.paths(deep).workspace;
  fs.mkdirSync(workspace, { recursive: true });
  const fd = (p: string) => fs.openSync(p, 'r');
  let at = fd(workspace);
  for (let i = 0; i < 40; i++) {
    const name = `${'d'.repeat(199)}${i % 10}`;
    fs.mkdirSync(`/proc/self/fd/${at}/${name}`);
    fs.writeFileSync(`/proc/self/fd/${at}/${name}.txt`, 'x');
    const nextAt = fd(`/proc/self/fd/${at}/${name}`);
    fs.closeSync(at);
    at = nextAt;
  }
  fs.writeFileSync(Buffer.concat([Buffer.from(`/proc/self/fd/${at}/`), Buffer.from([0x6e, 0xff, 0xfe])]), 'not utf-8');
  fs.symlinkSync(outside, `/proc/self/fd/${at}/link`);
  fs.closeSync(at);

  const r = await cliInProcess(['delete', deep, '--yes'], { home: b.h.root });
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(fs.readdirSync(b.h.home.sessionsDir), [next], 'the folder is gone, nothing hidden is left');
  assert.equal(fs.readFileSync(outside, 'utf8'), 'keep me', 'a symlink is removed, never followed');
  const again = await cliInProcess(['delete', next, '--yes'], { home: b.h.root });
  assert.equal(again.code, 0, again.stderr);
  assert.deepEqual(fs.readdirSync(b.h.home.sessionsDir), []);
});
