/**
 * Side effects come in through this object (STYLE point 4): the clock, the id
 * generator and the process environment (where secrets are read). Production
 * builds it once with systemDeps(); tests pass a manual clock and their own
 * environment, and may bring their own model registry and sandbox.
 */
import { systemClock, type Clock } from './clock.js';
import { systemIds, type Ids } from './ids.js';
import type { ModelRegistry } from './model/registry.js';
import type { SandboxFactory } from './sandbox/host-sandbox.js';

export interface Deps {
  clock: Clock;
  ids: Ids;
  /** The daemon's environment: secrets ({secret: {env: NAME}}) and API keys are read from it. */
  env: NodeJS.ProcessEnv;
  /** A number in [0, 1] (the jitter of backoffs); tests pass a fixed one. */
  random: () => number;
  /** Which model provider an agent's `provider` names (default: builtinModels). */
  models?: ModelRegistry;
  /** Builds each run's sandbox (default: hostSandbox, the shell and files of this machine). */
  sandbox?: SandboxFactory;
}

export function systemDeps(env: NodeJS.ProcessEnv = process.env): Deps {
  return { clock: systemClock, ids: systemIds(() => systemClock.now()), env, random: Math.random };
}
