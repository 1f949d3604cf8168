/** The daemon's text output shows the agent at work: what it said, each tool it ran, then the end line. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bench, NO_SHELL } from '../helpers/run.js';
import { Daemon } from '../../src/daemon/daemon.js';
import { defineOutcome } from '../../src/core/ops/session-ops.js';

/** Asks the daemon to look at a session and resolves when its run has ended. */
function runOnce(d: Daemon, id: string): Promise<void> {
  return new Promise<void>((resolve) => {
    const off = d.onResult((r) => {
      if (r.session_id === id && r.outcome === 'executed') {
        off();
        resolve();
      }
    });
    d.evaluate(id);
  });
}

test('text mode: per run, the first line of what the agent said and each tool with a short input, clipped to the width', async (t) => {
  const long = `Let me look around ${'very '.repeat(40)}carefully.\nA second line that is not shown.`;
  const b = await bench(t, {
    steps: [
      { text: long, toolUses: [{ id: 'toolu_1', name: 'bash', input: { command: 'echo hi' } }, { id: 'toolu_2', name: 'write', input: { file_path: 'notes.md', content: 'x' } }] },
      { text: 'Done.' },
    ],
  });
  const lines: string[] = [];
  const d = new Daemon(b.rt, { concurrency: 1, poll: false, sweepMs: 30_000, json: false, write: (l) => lines.push(l), columns: 80 });
  t.after(() => d.stop());
  await d.start();
  const id = b.session('hello');
  await runOnce(d, id);
  const run = lines.filter((l) => !l.includes('watching'));
  const said = run.filter((l) => / said {2}/.test(l));
  const tools = run.filter((l) => / tool {2}/.test(l));
  assert.equal(said.length, 2, run.join('\n'));
  assert.match(said[0]!, /said {2}Let me look around very very .*…$/);
  assert.ok(said[0]!.length <= 80, `clipped to the width: ${said[0]!.length}`);
  assert.ok(!run.some((l) => l.includes('second line')), 'only the first line of what it said');
  assert.match(said[1]!, /said {2}Done\.$/);
  assert.deepEqual(tools.map((l) => l.replace(/^.* tool {2}/, '')), ['bash: echo hi', 'write: notes.md']);
  const order = run.map((l) => (/^\S+ {2}start /.test(l) ? 'start' : / said {2}/.test(l) ? 'said' : / tool {2}/.test(l) ? 'tool' : /^\S+ {2}end /.test(l) ? 'end' : 'other'));
  assert.deepEqual(order.filter((x) => x !== 'other'), ['start', 'said', 'tool', 'tool', 'said', 'end']);
});

test('text mode: each evaluation of an outcome, its result and the first line of its explanation, between the agent\'s lines', { skip: NO_SHELL }, async (t) => {
  const b = await bench(t, {
    steps: [{ text: 'First try.' }, { toolUses: [{ id: 'toolu_1', name: 'write', input: { file_path: '/workspace/out.txt', content: 'done\n' } }] }, { text: 'Fixed.' }],
  });
  const lines: string[] = [];
  const d = new Daemon(b.rt, { concurrency: 1, poll: false, sweepMs: 30_000, json: false, write: (l) => lines.push(l), columns: 200 });
  t.after(() => d.stop());
  await d.start();
  const id = b.session();
  defineOutcome(b.store, id, { description: 'write out.txt', check: "grep -qs done out.txt || { echo 'out.txt lacks done'; exit 1; }" });
  await runOnce(d, id);
  const shown = lines.filter((l) => /^\S+ {4}\w{8} {2}(said|tool|grade) /.test(l)).map((l) => l.replace(/^\S+ {4}\w{8} {2}/, ''));
  assert.deepEqual(shown, [
    'said  First try.',
    "grade evaluation 1: needs_revision: Check failed: `grep -qs done out.txt || { echo 'out.txt lacks done'; exit 1; }` exited 1.",
    'tool  write: /workspace/out.txt',
    'said  Fixed.',
    "grade evaluation 2: satisfied: Check passed: `grep -qs done out.txt || { echo 'out.txt lacks done'; exit 1; }` exited 0.",
  ]);
  assert.match(lines.find((l) => / end {4}/.test(l)) ?? '', /outcome outc_\w+ evaluation 2: satisfied$/);
});

test('--json: only the machine lines, no agent words', async (t) => {
  const b = await bench(t, { steps: [{ text: 'words', toolUses: [{ id: 'toolu_1', name: 'bash', input: { command: 'echo hi' } }] }, { text: 'Done.' }] });
  const lines: string[] = [];
  const d = new Daemon(b.rt, { concurrency: 1, poll: false, sweepMs: 30_000, json: true, write: (l) => lines.push(l) });
  t.after(() => d.stop());
  await d.start();
  const id = b.session('hello');
  await runOnce(d, id);
  const kinds = lines.map((l) => JSON.parse(l).kind);
  assert.ok(kinds.includes('run_start') && kinds.includes('run_end'));
  assert.ok(kinds.every((k) => ['run_start', 'run_end', 'notice'].includes(k)), kinds.join(','));
});
