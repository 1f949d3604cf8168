/**
 * The loop's slots beyond the model, context, tools and steering
 * (loop-hooks.ts): bounds, after-close hooks, observers and prompt sections,
 * each seen working through a real run (wake) with a registration added by
 * WakeOptions.hooks, as an embedder or a new capability would.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sendMessage } from '../../src/core/ops/session-ops.js';
import type { Bound, RunObserver } from '../../src/core/run/loop-hooks.js';
import { unitRun } from '../helpers/unit-run.js';
import { MemorySandbox } from '../../src/core/sandbox/memory-sandbox.js';

test('an observer sees every step, request and tool call, in order, and a throwing observer changes nothing', async (t) => {
  const u = unitRun(t, { replies: [{ tools: [{ name: 'bash', input: { command: 'echo hi' } }] }, { text: 'done' }], sandbox: () => new MemorySandbox({ exec: () => 'hi' }) });
  const id = u.newSession();
  sendMessage(u.store, id, 'go');
  const seen: string[] = [];
  const watcher: RunObserver = {
    step: (_c, n) => seen.push(`step ${n}`),
    request: () => seen.push('request'),
    reply: (_c, _r, out) => seen.push('response' in out ? `reply ${out.response.stop_reason}` : `error ${out.error.code}`),
    toolCall: (_c, use, result) => seen.push(`tool ${'name' in use ? use.name : use.type} ${result?.isError ? 'error' : 'ok'}`),
  };
  const thrower: RunObserver = {
    step: () => {
      throw new Error('observers never change the run');
    },
  };
  const r = await u.run(id, { hooks: (d) => ({ ...d, observers: [thrower, watcher] }) });
  assert.deepEqual(r.stop_reason, { type: 'end_turn' });
  assert.deepEqual(seen, ['step 1', 'request', 'reply tool_use', 'tool bash ok', 'step 2', 'request', 'reply end_turn']);
});

test('a bound ends the run before the request it would allow, and the first of the list wins', async (t) => {
  const u = unitRun(t, { replies: [{ tools: [{ name: 'bash', input: { command: 'true' } }] }, { text: 'never asked' }] });
  const id = u.newSession();
  sendMessage(u.store, id, 'go');
  const oneRequest: Bound = {
    check: (_c, journal) => (journal.usage.model_requests >= 1 ? (journal.error({ code: 'one_request', message: 'one request per run here', retry: 'exhausted' }), { kind: 'idle', stop: { type: 'retries_exhausted' } }) : null),
  };
  const r = await u.run(id, { hooks: (d) => ({ ...d, bounds: [oneRequest, ...d.bounds] }) });
  assert.deepEqual(r.stop_reason, { type: 'retries_exhausted' });
  assert.equal(u.model!.requests.length, 1);
  assert.deepEqual(r.errors, ['one request per run here']);
});

test('after-close hooks run once the ending is in the log, with the session folded after it', async (t) => {
  const u = unitRun(t, { replies: [{ text: 'hi' }] });
  const id = u.newSession();
  sendMessage(u.store, id, 'go');
  const seen: Array<{ status: string; ending: string; lastInLog: string }> = [];
  const r = await u.run(id, {
    hooks: (d) => ({
      ...d,
      afterClose: [
        ...d.afterClose,
        { afterClose: (_rt, sid, after, ending) => seen.push({ status: after.status, ending: ending.kind, lastInLog: u.events(sid).at(-1)!.type }) },
        {
          afterClose: () => {
            throw new Error('an after-close hook repairs its own failures');
          },
        },
      ],
    }),
  });
  assert.deepEqual(r.stop_reason, { type: 'end_turn' });
  assert.deepEqual(seen, [{ status: 'idle', ending: 'idle', lastInLog: 'session.status_idle' }]);
});

test('prompt sections make the system prompt after the agent\'s own text, in list order, rendered once per run', async (t) => {
  const u = unitRun(t, { replies: [{ tools: [{ name: 'bash', input: { command: 'true' } }] }, { text: 'done' }] });
  const id = u.newSession();
  sendMessage(u.store, id, 'go');
  let renders = 0;
  await u.run(id, { hooks: (d) => ({ ...d, promptSections: [{ name: 'first', render: () => (renders++, '# First') }, { name: 'empty', render: () => null }, { name: 'last', render: () => '# Last' }] }) });
  const systems = u.model!.requests.map((q) => q.system);
  assert.equal(systems.length, 2);
  assert.equal(systems[0], 'You are a unit test.\n\n# First\n\n# Last');
  assert.equal(systems[1], systems[0]);
  assert.equal(renders, 1);
});
