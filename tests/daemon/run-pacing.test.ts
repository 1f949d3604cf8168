/**
 * RunPacing (src/daemon/run-pacing.ts): while a run that takes in reports is
 * urgent, the other runs step aside at their step boundaries for one turn of
 * the event loop; with none urgent, they go on at once.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RunPacing } from '../../src/daemon/run-pacing.js';
import type { LoopHooks } from '../../src/core/run/loop-hooks.js';
import type { ModelResponse } from '../../src/core/model/provider.js';

/** A run's work as a chain of promise continuations (what a run with an in-process model is), ending with `done`. */
async function chain(steps: number, order: string[], done: string) {
  for (let i = 0; i < steps; i++) await Promise.resolve();
  order.push(done);
}

test('with no run urgent, a step boundary costs nothing: it goes on before the next turn of the event loop', async () => {
  const pacing = new RunPacing();
  const order: string[] = [];
  setImmediate(() => order.push('next turn'));
  await pacing.stepAside();
  order.push('stepped');
  assert.deepEqual(order, ['stepped']);
  assert.equal(pacing.busy, false);
});

test('while a run is urgent, another run at a step boundary waits until the urgent work queued before it is done', async () => {
  const pacing = new RunPacing();
  const order: string[] = [];
  pacing.begin('parent');
  const low = (async () => {
    await pacing.stepAside();
    order.push('child step');
  })();
  const urgent = chain(200, order, 'parent run');
  await Promise.all([low, urgent]);
  assert.deepEqual(order, ['parent run', 'child step']);
  // Once it ends, nothing waits.
  pacing.end('parent');
  order.length = 0;
  const again = (async () => {
    await pacing.stepAside();
    order.push('child step');
  })();
  await Promise.all([again, chain(200, order, 'other work')]);
  assert.deepEqual(order, ['child step', 'other work']);
});

test('a run that steps aside is held one turn only, never until the urgent run ends', async () => {
  const pacing = new RunPacing();
  pacing.begin('parent'); // urgent, and waiting on I/O for as long as this test lasts
  const order: string[] = [];
  await pacing.stepAside();
  order.push('child step');
  assert.deepEqual(order, ['child step']);
  assert.equal(pacing.busy, true);
  pacing.end('parent');
  assert.equal(pacing.busy, false);
});

test("paced hooks: the model's requests and the after-run hooks start only after stepping aside; the rest is the run's own", async () => {
  const pacing = new RunPacing();
  const order: string[] = [];
  const reply = { content: [], stop_reason: 'end_turn' } as unknown as ModelResponse;
  const own = { afterRun: (_c: unknown, _j: unknown, ending: unknown) => ending };
  const hooks = {
    model: {
      name: 'scripted',
      complete: async () => {
        order.push('model');
        return reply;
      },
    },
    afterRun: [own],
    afterTurn: [],
  } as unknown as LoopHooks;
  const paced = pacing.paced(hooks);
  assert.equal(paced.model.name, 'scripted');
  assert.equal(paced.afterRun.length, 2);
  assert.equal(paced.afterRun[1], own);
  assert.equal(paced.afterTurn, hooks.afterTurn);

  pacing.begin('parent');
  const asked = paced.model.complete({} as never, new AbortController().signal);
  const ended = paced.afterRun[0]!.afterRun({} as never, {} as never, { kind: 'idle', stop: { type: 'end_turn' } }, {} as never);
  await chain(100, order, 'parent run');
  assert.equal(await asked, reply);
  assert.deepEqual(await ended, { kind: 'idle', stop: { type: 'end_turn' } });
  assert.deepEqual(order, ['parent run', 'model']);
});
