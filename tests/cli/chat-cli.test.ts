/**
 * `openboa send --wait` and `openboa chat`: the agent's turn as it happens,
 * with or without a daemon on the home, and what it waits for answered
 * inline. The real binary against the scripted Anthropic server.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { cli } from '../helpers/cli.js';
import { bench } from '../helpers/run.js';
import { spawnDaemon } from '../helpers/daemon-process.js';

const ASK_WRITE = { tools: { write: { permission: 'always_ask' } } };
const WRITE = { toolUses: [{ id: 'toolu_w', name: 'write', input: { file_path: 'report.md', content: 'numbers' } }] };

test('send --wait without a daemon runs the session here: the replies on stdout, tool calls on stderr, what it waits for; exit 0', async (t) => {
  const b = await bench(t, { agent: ASK_WRITE, steps: [{ text: 'Writing the report.', ...WRITE }] });
  const id = b.session();
  const env = { ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: b.fake.url };
  const r = await cli(['send', id.slice(-8), 'write the report', '--wait'], { home: b.h.root, env });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, 'Writing the report.\n');
  assert.match(r.stderr, /tool {2}write: \{"file_path":"report\.md"/);
  const use = b.store.snapshot(id).open_tool_uses[0]!.id;
  assert.match(r.stderr, new RegExp(`waiting on 1 answer\\(s\\):\\n  ${use}  write: openboa confirm ${id} ${use} --allow\\|--deny`));
  assert.doesNotMatch(r.stderr, /no daemon is running/, 'it ran the session itself');
});

test('send --wait with a daemon on the home watches the daemon run it, and a failed run backing off is exit 1 with why', async (t) => {
  const b = await bench(t, { steps: [{ text: 'Hello from the daemon.' }] });
  const env = { ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: b.fake.url };
  const d = spawnDaemon(t, b.h.root, env);
  await d.line((l) => l.kind === 'daemon_started');
  const id = b.session();
  const r = await cli(['send', id, 'hi', '--wait', '--json'], { home: b.h.root, env });
  assert.equal(r.code, 0, r.stderr);
  const out = r.stdout.trim().split('\n').map((l) => JSON.parse(l));
  assert.ok(out.some((e) => e.type === 'agent.message' && e.content[0].text === 'Hello from the daemon.'));
  assert.ok(out.some((e) => e.type === 'session.status_running' && d.lines.some((l) => l.kind === 'run_start' && l.wake_id === e.wake_id)), 'the daemon ran it');
  assert.deepEqual(out.at(-1), { end: 'idle', stop_reason: { type: 'end_turn' }, waiting: [], note: null });
  assert.equal(await d.term(), 0);

  // No daemon now, and the model fails (the scripted server has no step left: a 500): the retry is nobody's, and --wait says so.
  const again = await cli(['send', id, 'again', '--wait'], { home: b.h.root, env });
  assert.equal(again.code, 1, again.stderr);
  assert.match(again.stderr, /the run failed and is retried at \S+ \(the model API failed \(500\).*\); no daemon runs on this home to retry it/);
});

test('chat: each line a message; a confirmation answered at the prompt; the conversation goes on until the input ends', async (t) => {
  const b = await bench(t, { agent: ASK_WRITE, steps: [{ text: 'I need to write it.', ...WRITE }, { text: 'Written.' }, { text: 'You are welcome.' }] });
  const id = b.session();
  const env = { ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: b.fake.url };
  const r = await cli(['chat', id], { home: b.h.root, env, input: 'write the report\ny\nthanks\n' });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, 'I need to write it.\nWritten.\nYou are welcome.\n');
  assert.equal(fs.readFileSync(path.join(b.store.paths(id).workspace, 'report.md'), 'utf8'), 'numbers');
  const types = b.events(id).filter((e) => e.type.startsWith('user.')).map((e) => e.type);
  assert.deepEqual(types, ['user.message', 'user.tool_confirmation', 'user.message']);
});

test('chat: a denial with a message, and an escalation answered by its option number', async (t) => {
  const esc = { situation: 'Two ways to deploy.', options: ['Now', 'Tonight'], confidence: 0.5 };
  const b = await bench(t, {
    agent: ASK_WRITE,
    steps: [{ text: 'Writing.', ...WRITE }, { text: 'Then I ask.', toolUses: [{ id: 'toolu_e', name: 'escalate', input: esc }] }, { text: 'Tonight it is.' }],
  });
  const id = b.session();
  const env = { ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: b.fake.url };
  const r = await cli(['chat', id], { home: b.h.root, env, input: 'go\nnot there, use notes.md\n2\n' });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /the agent asks: Two ways to deploy\.\n {2}1\. Now\n {2}2\. Tonight/);
  const evs = b.events(id);
  const denial = evs.find((e) => e.type === 'user.tool_confirmation');
  assert.ok(denial && denial.type === 'user.tool_confirmation' && denial.result === 'deny' && denial.deny_message === 'not there, use notes.md');
  assert.match(JSON.stringify(b.fake.requests.at(-1)!.body.messages), /The person chose option 2: Tonight/);
  assert.match(r.stdout, /Tonight it is\.\n$/);
});

test('chat on a terminal: a confirmation prompt shows the agent\'s command with its control characters made visible', async (t) => {
  const pty = await import('node-pty');
  const { CLI } = await import('../helpers/cli.js');
  // A title sequence, then a return and an erase that would leave the person reading "allow bash: ls?".
  const command = 'rm -rf /workspace/keep \u001b]0;pwned\u0007\r\u001b[2Kallow bash: ls';
  const b = await bench(t, { agent: { tools: { bash: { permission: 'always_ask' } } }, steps: [{ text: 'Cleaning up.', toolUses: [{ id: 'toolu_b', name: 'bash', input: { command } }] }, { text: 'Left it.' }] });
  const id = b.session();
  const env: NodeJS.ProcessEnv = { ...process.env, ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: b.fake.url, TERM: 'xterm-256color' };
  delete env.OPENBOA_HOME;
  const p = pty.spawn(process.execPath, [CLI, '--home', b.h.root, 'chat', id], { name: 'xterm-256color', cols: 200, rows: 40, cwd: b.h.root, env: env as Record<string, string> });
  let out = '';
  const saw = (what: string) =>
    new Promise<void>((resolve) => {
      const d = p.onData(() => {
        if (!out.includes(what)) return;
        d.dispose();
        resolve();
      });
      if (out.includes(what)) resolve();
    });
  p.onData((d) => (out += d));
  const exited = new Promise<number>((resolve) => p.onExit(({ exitCode }) => resolve(exitCode)));
  await saw('> ');
  p.write('clean up\r');
  await saw('[y/N');
  p.write('n\r');
  await saw('Left it.');
  p.write('\u0004');
  assert.equal(await exited, 0, out);
  assert.ok(!out.includes('\u001b]0;pwned') && !out.includes('\r\u001b[2Kallow'), `no raw control sequence of the agent's: ${JSON.stringify(out)}`);
  assert.ok(out.includes('allow bash: rm -rf /workspace/keep \\u001b]0;pwned\\u0007\\u000d\\u001b[2Kallow bash: ls? [y/N'), JSON.stringify(out));
});
