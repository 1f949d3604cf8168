/**
 * The spawn bomb through the daemon (tests/core/spawn-bomb.test.ts has it
 * one run at a time): four runs at once, the real watcher and queue, the
 * memory sandbox and the bomb's model port. The root is interrupted while
 * the tree grows, with runs in flight and tasks queued; from then on no
 * session is made, and the whole tree goes idle.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { planRun } from '../../src/core/run/plan.js';
import { unitRun } from '../helpers/unit-run.js';
import { startDaemon } from '../helpers/daemon.js';
import { bombModel } from '../helpers/bomb-model.js';

test('an interrupt of the root stops a spawn bomb the daemon is running four runs at a time', { timeout: 120_000 }, async (t) => {
  // Once the tree is big enough, model requests are held: the interrupt comes while four runs wait on their replies.
  let gate: Promise<void> | null = null;
  let release = () => {};
  let held = 0;
  let allHeld = () => {};
  const fourHeld = new Promise<void>((r) => (allHeld = r));
  const m = bombModel({
    onRequest: async () => {
      if (!gate) return;
      if (++held === 4) allHeld();
      await gate;
    },
  });
  // Limits far above the bomb: only the interrupt stops it.
  const u = unitRun(t, { agents: { bomb: { delegates: 'self', limits: { max_tree_sessions: 2000, max_spawns_per_minute: 100_000 } } }, model: m.model });
  const root = u.newSession('bomb');
  u.store.appendUserEvent(root, { type: 'user.message', content: [{ type: 'text', text: 'split this in four' }] });
  const d = await startDaemon(t, u, { concurrency: 4 });
  await d.until(() => u.store.listIds().length >= 40, 60_000);
  gate = new Promise<void>((r) => (release = r));
  await fourHeld;
  assert.equal(d.d.activeRuns, 4);
  // The manual clock: what came before the interrupt is older than it, what comes after is newer.
  u.deps.clock.advance(10);
  u.store.appendUserEvent(root, { type: 'user.interrupt', reason: 'stop the tree' });
  const atInterrupt = u.store.listIds().length;
  u.deps.clock.advance(10);
  release();
  const quiet = () => d.d.activeRuns === 0 && u.store.listIds().every((id) => !planRun(u.store.snapshot(id, { persist: false }), u.deps.clock.now(), {}).runnable);
  // Until the tree is quiet, or plainly still growing.
  await d.until(() => quiet() || u.store.listIds().length > atInterrupt + 40, 60_000);
  await d.d.idle();
  assert.equal(u.store.listIds().length, atInterrupt, 'no session was made after the interrupt');
  for (const id of u.store.listIds()) assert.equal(u.store.snapshot(id).status, 'idle', `${id} is idle`);
});
