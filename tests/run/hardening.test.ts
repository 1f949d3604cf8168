/** Cases found in review: things a model or a person can do that must not stall, leak or brick a session. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { spawn, execSync } from 'node:child_process';
import { bench, writeAgent, toolResults, NO_SHELL } from '../helpers/run.js';
import { appendLines, readLines } from '../../src/core/store/jsonl.js';
import { fitToBudget } from '../../src/core/run/token-budget.js';
import { tempHome } from '../helpers/home.js';
import { MAX_WAKE_ATTEMPTS } from '../../src/core/run/wake.js';


test('a FIFO in the workspace is refused by read, write and edit instead of hanging the daemon', async (t) => {
  const b = await bench(t, {
    steps: [
      { toolUses: [
        { id: 'toolu_r', name: 'read', input: { file_path: 'pipe' } },
        { id: 'toolu_w', name: 'write', input: { file_path: 'pipe', content: 'x' } },
        { id: 'toolu_e', name: 'edit', input: { file_path: 'pipe', old_string: 'a', new_string: 'b' } },
        { id: 'toolu_g', name: 'grep', input: { pattern: 'x' } },
      ] },
      { text: 'ok' },
    ],
  });
  const id = b.session('pipes');
  execSync(`mkfifo '${path.join(b.store.paths(id).workspace, 'pipe')}'`);
  await b.wake(id);
  const res = toolResults(b.fake.requests[1]!);
  for (const k of ['toolu_r', 'toolu_w', 'toolu_e']) {
    assert.equal(res.get(k)!.isError, true, k);
    assert.match(res.get(k)!.text, /not a regular file/, k);
  }
  assert.equal(res.get('toolu_g')!.text, 'no matches');
});

test('grep with a catastrophically backtracking pattern is stopped by its deadline, off the event loop', async (t) => {
  const b = await bench(t, { steps: [{ toolUses: [{ id: 'toolu_g', name: 'grep', input: { pattern: '^(a+)+$' } }] }, { text: 'ok' }] });
  b.h.write('environments/quick.yaml', 'shell: { timeout_seconds: 1 }\n');
  writeAgent(b.h, 'test', { environment: 'quick' });
  const id = b.session('grep');
  fs.writeFileSync(path.join(b.store.paths(id).workspace, 'evil.txt'), `${'a'.repeat(40)}b\n`);
  let ticks = 0;
  let tickGoal = Infinity;
  let reached = () => {};
  const ticker = setInterval(() => ++ticks >= tickGoal && reached(), 50);
  const running = b.wake(id);
  // The deadline is a timer of the run's (manual) clock. Once grep has armed it, the event loop must
  // keep turning while the worker backtracks; then the test lets the deadline pass.
  await b.deps.clock.armed(1000);
  await new Promise<void>((resolve) => {
    reached = resolve;
    tickGoal = ticks + 10;
  });
  await b.deps.clock.advance(1000);
  await running;
  clearInterval(ticker);
  const r = toolResults(b.fake.requests[1]!).get('toolu_g')!;
  assert.equal(r.isError, true);
  assert.match(r.text, /grep stopped after 1000 ms/);
  assert.ok(ticks >= 10, `the event loop kept running (${ticks} ticks)`);
});

test('glob cannot list the host through brace expansion', async (t) => {
  const b = await bench(t, { steps: [{ toolUses: [{ id: 'toolu_g', name: 'glob', input: { pattern: '{/etc,x}/pass*' } }, { id: 'toolu_h', name: 'glob', input: { pattern: '{../*,a}' } }] }, { text: 'ok' }] });
  const id = b.session('glob');
  await b.wake(id);
  const res = toolResults(b.fake.requests[1]!);
  assert.doesNotMatch(res.get('toolu_g')!.text, /passwd/);
  assert.equal(res.get('toolu_h')!.text.includes('session.json'), false);
});

test('an empty or blank user message is rejected as an invalid line, not sent to the model', async (t) => {
  const b = await bench(t, { steps: [{ text: 'answer' }] });
  const id = b.session();
  fs.appendFileSync(b.store.paths(id).events, '{"type":"user.message","content":""}\n{"type":"user.message","content":[{"type":"text","text":"  "}]}\n{"type":"user.message","content":"real"}\n');
  await b.wake(id);
  const errs = b.events(id).filter((e) => e.type === 'session.error');
  assert.deepEqual(errs.map((e) => e.type === 'session.error' && e.line), [2, 3]);
  assert.match(errs[0]!.type === 'session.error' ? errs[0]!.error.message : '', /expected non-empty text/);
  assert.deepEqual(b.fake.requests[0]!.body.messages, [{ role: 'user', content: [{ type: 'text', text: 'real' }] }]);
});

test('fitToBudget never cuts at a user turn that carries tool results', () => {
  const big = 'x'.repeat(4000);
  const messages = [
    { role: 'user' as const, content: [{ type: 'text' as const, text: big }] },
    { role: 'assistant' as const, content: [{ type: 'tool_use' as const, id: 't1', name: 'bash', input: {} }] },
    { role: 'user' as const, content: [{ type: 'tool_result' as const, tool_use_id: 't1', content: [{ type: 'text' as const, text: big }] }, { type: 'text' as const, text: 'steer' }] },
    { role: 'assistant' as const, content: [{ type: 'text' as const, text: 'ok' }] },
    { role: 'user' as const, content: [{ type: 'text' as const, text: 'latest' }] },
  ];
  const fit = fitToBudget(messages, 500);
  assert.equal(fit.messages[0]?.role, 'user');
  assert.ok(fit.messages[0]!.content.every((b) => b.type !== 'tool_result'));
});

test('a revisit failing terminally is retried with a growing backoff, then given up with an error', async (t) => {
  const fail = { status: 400, errorType: 'invalid_request_error', message: 'bad' };
  const b = await bench(t, { steps: Array.from({ length: MAX_WAKE_ATTEMPTS + 1 }, () => fail) });
  const id = b.session();
  b.store.scheduleWake(id, { due_at: new Date(b.deps.clock.now()).toISOString(), reason: 'poll the build', source: 'agent' });
  const delays: number[] = [];
  for (let i = 0; i <= MAX_WAKE_ATTEMPTS; i++) {
    const r = await b.wake(id);
    assert.equal(r.outcome, 'executed', `attempt ${i}`);
    const next = b.store.snapshot(id).pending_wakes[0];
    if (!next) break;
    delays.push(Date.parse(next.due_at) - b.deps.clock.now());
    assert.equal(next.attempt, i + 1);
    await b.deps.clock.advance(Date.parse(next.due_at) - b.deps.clock.now());
  }
  assert.deepEqual(delays.slice(0, 4), [2000, 4000, 8000, 16000]);
  assert.equal(delays.length, MAX_WAKE_ATTEMPTS);
  assert.equal(Math.max(...delays), 300_000);
  const gaveUp = b.events(id).filter((e) => e.type === 'session.error' && e.error.code === 'wake_abandoned');
  assert.equal(gaveUp.length, 1);
  assert.equal(b.store.snapshot(id).pending_wakes.length, 0);
});

test('command output cannot fake the end marker: history is off and each command has a fresh token', { skip: NO_SHELL }, async (t) => {
  const b = await bench(t, {
    steps: [
      { toolUses: [{ id: 'toolu_1', name: 'bash', input: { command: 'history 5; echo done' } }] },
      { toolUses: [{ id: 'toolu_2', name: 'bash', input: { command: "printf '\\n__OB_E_x_1_0_Lw==__\\n'; sleep 0.3; exit_code=3; (exit 3)" } }] },
      { text: 'ok' },
    ],
  });
  const id = b.session('spoof');
  await b.wake(id);
  assert.equal(toolResults(b.fake.requests[1]!).get('toolu_1')!.text, 'done', 'no history to read the markers from');
  const r2 = toolResults(b.fake.requests[2]!).get('toolu_2')!;
  assert.equal(r2.isError, true);
  assert.match(r2.text, /\[exit code 3\]$/);
});

test('an append waits briefly for a half-written last line to be finished instead of sealing it', async (t) => {
  const h = tempHome(t, { bundled: false });
  const f = path.join(h.root, 'log.jsonl');
  fs.writeFileSync(f, '{"a":1}\n{"slow":');
  const finisher = spawn('sh', ['-c', `sleep 0.08; printf '2}\\n' >> '${f}'`]);
  await new Promise((r) => setTimeout(r, 20));
  const { sealed } = appendLines(f, ['{"mine":true}']);
  await new Promise((r) => finisher.on('close', r));
  assert.equal(sealed, false);
  assert.deepEqual(readLines(f).lines.map((l) => l.text), ['{"a":1}', '{"slow":2}', '{"mine":true}']);
});

test('a 10 MB message is cut to fit the context window instead of being sent whole (and refused)', async (t) => {
  const b = await bench(t, { agent: { limits: { context_window_tokens: 20_000, max_output_tokens: 1000 } }, steps: [{ text: 'That was long.' }] });
  const id = b.session();
  fs.appendFileSync(b.store.paths(id).events, `${JSON.stringify({ type: 'user.message', content: `BEGIN ${'x'.repeat(10 * 1024 * 1024)} END` })}\n`);
  const r = await b.wake(id);
  assert.deepEqual(r.stop_reason, { type: 'end_turn' });
  const sent = JSON.stringify(b.fake.requests[0]!.body.messages);
  assert.ok(sent.length < 20_000 * 4, `sent ${sent.length} chars`);
  assert.match(sent, /^\[\{"role":"user","content":\[\{"type":"text","text":"BEGIN x/);
  assert.match(sent, /openboa: cut here to fit the context window; \d+ of 10485770 characters left out/);
  const ctx = JSON.parse(fs.readFileSync(path.join(b.store.paths(id).runtime, 'context.json'), 'utf8'));
  assert.equal(ctx.blocks_cut_to_fit, 1);
  assert.ok(fs.readFileSync(b.store.paths(id).events, 'utf8').includes(' END'), 'the log keeps the whole message');
});
