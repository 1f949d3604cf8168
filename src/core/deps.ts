/**
 * Side effects come in through this object (STYLE point 4): the clock, the id
 * generator and the process environment (where secrets are read). Production
 * builds it once with systemDeps(); tests pass a manual clock and their own
 * environment. Later layers extend it with the model and the sandbox.
 */
import { systemClock, type Clock } from './clock.js';
import { systemIds, type Ids } from './ids.js';
import type { ModelRegistry } from './model/registry.js';

export interface Deps {
  clock: Clock;
  ids: Ids;
  /** The daemon's environment: secrets ({secret: {env: NAME}}) and API keys are read from it. */
  env: NodeJS.ProcessEnv;
  /** A number in [0, 1] (the jitter of backoffs); tests pass a fixed one. */
  random: () => number;
  /** Which model provider an agent's `provider` names (default: builtinModels). */
  models?: ModelRegistry;
}

export function systemDeps(env: NodeJS.ProcessEnv = process.env): Deps {
  return { clock: systemClock, ids: systemIds(() => systemClock.now()), env, random: Math.random };
}
