import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { bench, shellWorkspace, toolResults, NO_SHELL } from '../helpers/run.js';
import { validateLog } from '../helpers/event-schema.js';

test('tool round trip: assistant content echoed unchanged, results paired by toolu id', { skip: NO_SHELL }, async (t) => {
  const b = await bench(t, {
    steps: [
      { text: 'Two things at once.', toolUses: [{ id: 'toolu_A', name: 'bash', input: { command: 'echo from-bash' } }, { id: 'toolu_B', name: 'write', input: { file_path: 'hello.txt', content: 'hi' } }] },
      { text: 'Done.' },
    ],
  });
  const id = b.session('go');
  const r = await b.wake(id);
  assert.deepEqual(r.stop_reason, { type: 'end_turn' });
  assert.equal(r.tool_calls, 2);
  const second = b.fake.requests[1]!.body.messages;
  assert.equal(second.length, 3);
  assert.deepEqual(second[1], {
    role: 'assistant',
    content: [
      { type: 'text', text: 'Two things at once.' },
      { type: 'tool_use', id: 'toolu_A', name: 'bash', input: { command: 'echo from-bash' } },
      { type: 'tool_use', id: 'toolu_B', name: 'write', input: { file_path: 'hello.txt', content: 'hi' } },
    ],
  });
  const res = toolResults(b.fake.requests[1]!);
  assert.deepEqual([...res.keys()], ['toolu_A', 'toolu_B']);
  assert.equal(res.get('toolu_A')!.text, 'from-bash');
  assert.match(res.get('toolu_B')!.text, /wrote 2 bytes to \/workspace\/hello\.txt/);
  // in the log, results name the agent.tool_use event, which keeps the model's id
  const ev = b.events(id);
  const uses = ev.filter((e) => e.type === 'agent.tool_use');
  const outs = ev.filter((e) => e.type === 'agent.tool_result');
  assert.deepEqual(uses.map((u) => u.type === 'agent.tool_use' && [u.model_tool_use_id, u.evaluated_permission]), [['toolu_A', 'allow'], ['toolu_B', 'allow']]);
  assert.deepEqual(outs.map((o) => o.type === 'agent.tool_result' && o.tool_use_id), uses.map((u) => u.id));
  assert.equal(fs.readFileSync(path.join(b.store.paths(id).workspace, 'hello.txt'), 'utf8'), 'hi');
  assert.deepEqual(validateLog(b.store.paths(id).events).errors, []);
});

test('every file tool: write, read (range), edit (once / ambiguous / all), glob, grep', async (t) => {
  const b = await bench(t, {
    steps: [
      { toolUses: [
        { id: 'toolu_w', name: 'write', input: { file_path: '/workspace/src/app.txt', content: 'alpha\nbeta\ngamma\nbeta\n' } },
        { id: 'toolu_r', name: 'read', input: { file_path: 'src/app.txt', view_range: [2, 3] } },
        { id: 'toolu_e1', name: 'edit', input: { file_path: 'src/app.txt', old_string: 'alpha', new_string: 'ALPHA' } },
        { id: 'toolu_e2', name: 'edit', input: { file_path: 'src/app.txt', old_string: 'beta', new_string: 'B' } },
        { id: 'toolu_e3', name: 'edit', input: { file_path: 'src/app.txt', old_string: 'beta', new_string: 'B', replace_all: true } },
        { id: 'toolu_e4', name: 'edit', input: { file_path: 'src/app.txt', old_string: 'nope', new_string: 'x' } },
        { id: 'toolu_g', name: 'glob', input: { pattern: '**/*.txt' } },
        { id: 'toolu_gr', name: 'grep', input: { pattern: '^B$', path: '/workspace/src' } },
        { id: 'toolu_ls', name: 'read', input: { file_path: '/workspace' } },
      ] },
      { text: 'ok' },
    ],
  });
  const id = b.session('files');
  await b.wake(id);
  const res = toolResults(b.fake.requests[1]!);
  assert.equal(res.get('toolu_r')!.text, '2\tbeta\n3\tgamma');
  assert.match(res.get('toolu_e1')!.text, /replaced 1 occurrence/);
  assert.equal(res.get('toolu_e2')!.isError, true);
  assert.match(res.get('toolu_e2')!.text, /occurs 2 times/);
  assert.match(res.get('toolu_e3')!.text, /replaced 2 occurrence/);
  assert.equal(res.get('toolu_e4')!.isError, true);
  assert.match(res.get('toolu_e4')!.text, /not found/);
  assert.equal(res.get('toolu_g')!.text, '/workspace/src/app.txt');
  assert.equal(res.get('toolu_gr')!.text, '/workspace/src/app.txt:2:B\n/workspace/src/app.txt:4:B');
  assert.equal(res.get('toolu_ls')!.text, 'src/');
  assert.equal(fs.readFileSync(path.join(b.store.paths(id).workspace, 'src/app.txt'), 'utf8'), 'ALPHA\nB\ngamma\nB\n');
});

test('file tools refuse escapes by .., absolute path, symlinked file and symlinked directory', async (t) => {
  const b = await bench(t, {
    steps: [
      { toolUses: [
        { id: 'toolu_1', name: 'read', input: { file_path: '../session.json' } },
        { id: 'toolu_2', name: 'read', input: { file_path: '/etc/passwd' } },
        { id: 'toolu_3', name: 'read', input: { file_path: 'leak' } },
        { id: 'toolu_4', name: 'write', input: { file_path: 'outdir/planted.txt', content: 'x' } },
        { id: 'toolu_5', name: 'grep', input: { pattern: 'agent_id', path: '/workspace' } },
        { id: 'toolu_6', name: 'glob', input: { pattern: '../*' } },
        { id: 'toolu_7', name: 'write', input: { file_path: '/runtime/evil.json', content: '{}' } },
        { id: 'toolu_8', name: 'read', input: { file_path: '/runtime/environment.json' } },
      ] },
      { text: 'ok' },
    ],
  });
  const id = b.session('escape');
  const p = b.store.paths(id);
  fs.symlinkSync(p.snapshot, path.join(p.workspace, 'leak'));
  fs.symlinkSync(p.dir, path.join(p.workspace, 'outdir'));
  await b.wake(id);
  const res = toolResults(b.fake.requests[1]!);
  for (const k of ['toolu_1', 'toolu_2', 'toolu_3', 'toolu_4', 'toolu_6', 'toolu_7']) assert.equal(res.get(k)!.isError, true, k);
  for (const k of ['toolu_1', 'toolu_2', 'toolu_3', 'toolu_4']) assert.match(res.get(k)!.text, /outside the workspace/, k);
  assert.match(res.get('toolu_7')!.text, /read-only/);
  assert.equal(res.get('toolu_5')!.text, 'no matches', 'grep does not follow the symlinks out');
  assert.equal(fs.existsSync(path.join(p.dir, 'planted.txt')), false);
  assert.equal(res.get('toolu_8')!.isError, false, '/runtime is readable');
  assert.match(res.get('toolu_8')!.text, /"isolation"/);
});

test('invalid tool input and unknown tools become error results naming the problem', async (t) => {
  const b = await bench(t, {
    steps: [
      { toolUses: [
        { id: 'toolu_1', name: 'read', input: { file_path: 42 } },
        { id: 'toolu_2', name: 'bash', input: {} },
        { id: 'toolu_3', name: 'schedule_wake', input: { reason: 'x' } },
        { id: 'toolu_4', name: 'teleport', input: {} },
        { id: 'toolu_5', name: 'write', input: { file_path: 'a', content: 'b', extra: 1 } },
      ] },
      { text: 'ok' },
    ],
  });
  const id = b.session('bad inputs');
  await b.wake(id);
  const res = toolResults(b.fake.requests[1]!);
  assert.match(res.get('toolu_1')!.text, /^invalid input for read: file_path: .*expected string/);
  assert.match(res.get('toolu_2')!.text, /^invalid input for bash: command: expected a command, or restart: true/);
  assert.match(res.get('toolu_3')!.text, /^invalid input for schedule_wake: delay_seconds: expected exactly one of delay_seconds or at/);
  assert.match(res.get('toolu_4')!.text, /there is no tool named "teleport"/);
  assert.match(res.get('toolu_5')!.text, /^invalid input for write: .*extra/);
  for (const v of res.values()) assert.equal(v.isError, true);
  const denied = b.events(id).find((e) => e.type === 'agent.tool_use' && e.name === 'teleport');
  assert.equal(denied?.type === 'agent.tool_use' && denied.evaluated_permission, 'deny');
});

test('shell state: cd and export persist within a run, the cwd across runs (runtime/shell.json)', { skip: NO_SHELL }, async (t) => {
  const b = await bench(t, {
    steps: [
      { toolUses: [{ id: 'toolu_1', name: 'bash', input: { command: 'mkdir -p proj && cd proj && export MODE=fast' } }] },
      { toolUses: [{ id: 'toolu_2', name: 'bash', input: { command: 'pwd; echo "mode=$MODE"' } }] },
      { text: 'done' },
      { toolUses: [{ id: 'toolu_3', name: 'bash', input: { command: 'pwd' } }] },
      { text: 'done again' },
    ],
  });
  const id = b.session('first');
  const proj = `${shellWorkspace(b, id)}/proj`;
  await b.wake(id);
  assert.equal(toolResults(b.fake.requests[2]!).get('toolu_2')!.text, `${proj}\nmode=fast`);
  const shellJson = JSON.parse(fs.readFileSync(path.join(b.store.paths(id).runtime, 'shell.json'), 'utf8'));
  assert.equal(shellJson.cwd, proj);
  assert.equal(shellJson.alive, false, 'the shell is closed when the run ends');
  assert.equal(shellJson.last_exit_code, 0);
  const history = fs.readFileSync(path.join(b.store.paths(id).runtime, 'shell-history.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  assert.deepEqual(history.map((h) => h.command), ['mkdir -p proj && cd proj && export MODE=fast', 'pwd; echo "mode=$MODE"']);
  assert.equal(fs.readFileSync(path.join(b.store.paths(id).runtime, 'last-shell-output.txt'), 'utf8'), `${proj}\nmode=fast`);
  b.store.appendUserEvent(id, { type: 'user.message', content: [{ type: 'text', text: 'second' }] });
  await b.wake(id);
  assert.equal(toolResults(b.fake.requests[4]!).get('toolu_3')!.text, proj, 'a new shell starts where the last one stood');
});

test('output over the limit is saved to a workspace file; the model gets head, tail and path', { skip: NO_SHELL }, async (t) => {
  const b = await bench(t, { steps: [{ toolUses: [{ id: 'toolu_big', name: 'bash', input: { command: 'seq 1 20000' } }] }, { text: 'ok' }] });
  b.h.write('environments/small.yaml', 'shell: { output_limit_chars: 2000 }\n');
  const { writeAgent } = await import('../helpers/run.js');
  writeAgent(b.h, 'test', { environment: 'small' });
  const id = b.session('big output');
  await b.wake(id);
  const text = toolResults(b.fake.requests[1]!).get('toolu_big')!.text;
  assert.ok(text.length < 2600, `${text.length} chars`);
  assert.match(text, /^1\n2\n3\n/);
  assert.match(text, /19999\n20000$/);
  const m = /is in (\/workspace\/\.openboa\/tool-output\/\S+\.txt)/.exec(text);
  assert.ok(m, text.slice(0, 300));
  const saved = fs.readFileSync(path.join(b.store.paths(id).workspace, m[1]!.slice('/workspace/'.length)), 'utf8');
  assert.equal(saved.split('\n').length, 20000);
});
