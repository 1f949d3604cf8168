/**
 * Deps for in-process tests: a manual clock, real ids, a private
 * environment, the production model registry and sandbox (a test that
 * needs a scripted model or the in-memory sandbox passes its own), and a
 * resolver that knows no name (tableNetwork: a test gives its own table).
 */
import { systemIds } from '../../src/core/foundation/ids.js';
import type { Deps } from '../../src/core/foundation/deps.js';
import { builtinModels } from '../../src/core/model/registry.js';
import { hostSandbox } from '../../src/core/sandbox/host-sandbox.js';
import { ManualClock } from './clock.js';
import type { NetworkPort, ResolvedAddress } from '../../src/core/egress/network-port.js';

/**
 * A resolver that knows only the names given (tests never ask the real DNS:
 * they must not leave the machine). Every other name fails as an unknown one.
 */
export function tableNetwork(table: Record<string, string | string[]> = {}): NetworkPort {
  return {
    ownPorts: new Set(),
    async resolve(host) {
      const v = table[host.toLowerCase()];
      if (v === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
      return (Array.isArray(v) ? v : [v]).map((address): ResolvedAddress => ({ address, family: address.includes(':') ? 6 : 4 }));
    },
  };
}

export function testDeps(env: NodeJS.ProcessEnv = {}): Deps & { clock: ManualClock } {
  const clock = new ManualClock();
  // random 1: every backoff is its cap, so tests can name it exactly.
  return { clock, ids: systemIds(() => clock.now()), env, random: () => 1, models: builtinModels, sandbox: hostSandbox, network: tableNetwork() };
}
