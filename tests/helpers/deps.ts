/** Deps for in-process tests: a manual clock, real ids, a private environment. */
import { systemIds } from '../../src/core/ids.js';
import type { Deps } from '../../src/core/deps.js';
import { ManualClock } from './clock.js';

export function testDeps(env: NodeJS.ProcessEnv = {}): Deps & { clock: ManualClock } {
  const clock = new ManualClock();
  // random 1: every backoff is its cap, so tests can name it exactly.
  return { clock, ids: systemIds(() => clock.now()), env, random: () => 1 };
}
