/**
 * Deps for in-process tests: a manual clock, real ids, a private
 * environment, and the production model registry and sandbox (a test that
 * needs a scripted model or the in-memory sandbox passes its own).
 */
import { systemIds } from '../../src/core/foundation/ids.js';
import type { Deps } from '../../src/core/foundation/deps.js';
import { builtinModels } from '../../src/core/model/registry.js';
import { hostSandbox } from '../../src/core/sandbox/host-sandbox.js';
import { ManualClock } from './clock.js';

export function testDeps(env: NodeJS.ProcessEnv = {}): Deps & { clock: ManualClock } {
  const clock = new ManualClock();
  // random 1: every backoff is its cap, so tests can name it exactly.
  return { clock, ids: systemIds(() => clock.now()), env, random: () => 1, models: builtinModels, sandbox: hostSandbox };
}
