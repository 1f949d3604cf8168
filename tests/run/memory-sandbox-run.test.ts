/** A whole run against the memory sandbox (Deps.sandbox): the tools reach only it, and the run closes it. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { bench, toolResults } from '../helpers/run.js';
import * as api from '../../src/index.js';

test('a run whose deps bring a MemorySandbox: files and commands go to it, nothing to the host workspace', async (t) => {
  const b = await bench(t, {
    steps: [
      {
        toolUses: [
          { id: 'toolu_w', name: 'write', input: { file_path: 'notes/todo.md', content: 'ship it\n' } },
          { id: 'toolu_b', name: 'bash', input: { command: 'cat notes/todo.md' } },
          { id: 'toolu_r', name: 'read', input: { file_path: '/runtime/environment.json' } },
        ],
      },
      { text: 'done' },
    ],
  });
  // From the package's entry point, as an embedder would take it.
  const mem = new api.MemorySandbox({ files: { '/runtime/environment.json': '{"isolation":"memory"}' }, exec: (cmd, o) => (cmd === 'cat notes/todo.md' ? (o.sandbox.text(cmd.slice(4)) ?? '').trimEnd() : { exitCode: 127 }) });
  const specs: api.HostSandboxOptions[] = [];
  b.deps.sandbox = (spec) => (specs.push(spec), mem);
  const id = b.session('use the memory');
  const r = await b.wake(id);
  assert.deepEqual(r.stop_reason, { type: 'end_turn' });
  const res = toolResults(b.fake.requests[1]!);
  assert.deepEqual(res.get('toolu_w'), { text: 'wrote 8 bytes to /workspace/notes/todo.md', isError: false });
  assert.deepEqual(res.get('toolu_b'), { text: 'ship it', isError: false });
  assert.deepEqual(res.get('toolu_r'), { text: '1\t{"isolation":"memory"}', isError: false });
  assert.equal(mem.text('notes/todo.md'), 'ship it\n');
  assert.equal(mem.closeCount, 1, 'the run closes its sandbox once, when it ends');
  assert.equal(specs.length, 1);
  assert.equal(specs[0]!.workspaceHost, b.store.paths(id).workspace, 'the factory is told what the run knows');
  assert.equal(fs.existsSync(path.join(b.store.paths(id).workspace, 'notes')), false);
});
