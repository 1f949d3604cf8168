/**
 * Side effects come in through this object (STYLE point 4): the clock, the id
 * generator and the process environment (where secrets are read). Production
 * builds it once with systemDeps(); tests pass a manual clock and their own
 * environment, and their own model registry, sandbox and resolver. Every port is
 * required: nothing in the run imports a concrete provider or sandbox.
 */
import { systemClock, type Clock } from './clock.js';
import { systemIds, type Ids } from './ids.js';
import { builtinModels, type ModelRegistry } from '../model/registry.js';
import type { SandboxFactory } from '../sandbox/sandbox.js';
import { systemNetwork, type NetworkPort } from '../egress/network-port.js';
import type { Telemetry } from '../telemetry/telemetry.js';

/**
 * This machine's sandbox, loaded with the first run that needs one: a
 * process that never runs a session (most CLI commands) never loads the
 * shell, the pty or the file walk.
 */
let hostModule: Promise<typeof import('../sandbox/host-sandbox.js')> | null = null;
// Kept once loaded: import() again goes through the module loader (its resolution and hooks) at every run.
const hostSandbox: SandboxFactory = async (spec) => (await (hostModule ??= import('../sandbox/host-sandbox.js'))).hostSandbox(spec);

export interface Deps {
  clock: Clock;
  ids: Ids;
  /** The daemon's environment: secrets ({secret: {env: NAME}}) and API keys are read from it. */
  env: NodeJS.ProcessEnv;
  /** A number in [0, 1] (the jitter of backoffs); tests pass a fixed one. */
  random: () => number;
  /** Which model provider an agent's `provider` names (systemDeps: builtinModels). */
  models: ModelRegistry;
  /** Builds each run's sandbox (systemDeps: hostSandbox, the shell and files of this machine). */
  sandbox: SandboxFactory;
  /** How names are resolved for the egress proxy and web_fetch, and the daemon's own ports (egress/network-port.ts). */
  network: NetworkPort;
  /** Where runs' spans and measurements go (docs/observability.md); absent: nowhere, at no cost. The daemon sets it when asked to. */
  telemetry?: Telemetry;
}

/** The production ports: the system clock, UUIDv7 ids, Math.random, the built-in model providers and this machine's sandbox. */
export function systemDeps(env: NodeJS.ProcessEnv = process.env): Deps {
  return { clock: systemClock, ids: systemIds(() => systemClock.now()), env, random: Math.random, models: builtinModels, sandbox: hostSandbox, network: systemNetwork() };
}
