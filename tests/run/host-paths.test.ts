/** What the model reads never names the host path of the session (under bubblewrap). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { bench, toolResults } from '../helpers/run.js';
import { probeCapabilities } from '../../src/core/sandbox/isolation.js';

const bwrap = probeCapabilities().bwrap;

test('tool output and errors speak sandbox paths: mountinfo, a missing file, a bad cd', { skip: bwrap ? false : 'needs bubblewrap (the shell runs on the host otherwise, where host paths are its real ones)' }, async (t) => {
  const b = await bench(t, {
    steps: [
      {
        toolUses: [
          { id: 'toolu_m', name: 'bash', input: { command: 'cat /proc/self/mountinfo' } },
          { id: 'toolu_r', name: 'read', input: { file_path: '/workspace/nope/x.txt' } },
          { id: 'toolu_w', name: 'write', input: { file_path: '/runtime/x.txt', content: 'x' } },
        ],
      },
      { text: 'done' },
    ],
  });
  const id = b.session('look around');
  await b.wake(id);
  const res = toolResults(b.fake.requests[1]!);
  const roots = [b.h.root, fs.realpathSync(b.h.root)];
  for (const [k, v] of res) for (const r of roots) assert.ok(!v.text.includes(r), `${k} names the host path: ${v.text.slice(0, 300)}`);
  assert.match(res.get('toolu_m')!.text, / \/workspace \/workspace /, 'the workspace mount is shown by its sandbox path');
  assert.match(res.get('toolu_r')!.text, /^\/workspace\/nope: no such file or directory$/);
  assert.match(res.get('toolu_w')!.text, /\/runtime is read-only/);
  // and so does the log, which keeps what the model read
  const log = fs.readFileSync(b.store.paths(id).events, 'utf8');
  for (const r of roots) assert.ok(!log.includes(`${r}/sessions`), 'the log names the host path');
});

test('a cwd the agent reports (a symlink to a host path) is not looked up on the host, and the next shell still starts', { skip: bwrap ? false : 'needs bubblewrap' }, async (t) => {
  const b = await bench(t, {
    steps: [
      // the agent's shell reports a cwd of its choosing: a link to a path that exists on the host only
      { toolUses: [{ id: 'toolu_1', name: 'bash', input: { command: 'ln -s /root /workspace/probe; pwd() { echo /workspace/probe; }' } }] },
      { text: 'first run done' },
      { toolUses: [{ id: 'toolu_2', name: 'bash', input: { command: 'pwd' } }] },
      { text: 'second run done' },
    ],
  });
  const id = b.session('one');
  await b.wake(id);
  b.store.appendUserEvent(id, { type: 'user.message', content: 'two' });
  await b.wake(id);
  const res = toolResults(b.fake.requests[3]!).get('toolu_2')!;
  assert.equal(res.isError, false, res.text);
  assert.equal(res.text, '/workspace');
});
