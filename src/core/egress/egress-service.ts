/**
 * The egress proxy as a run service (run/loop-hooks.ts, RunService): for a
 * run whose environment says `network: limited` (and whose sandbox closes
 * the network), a proxy of its own (egress-proxy.ts) on a Unix socket in a
 * private directory, the socket and the proxy variables handed to the
 * sandbox (sandbox/egress-bridge.ts), the proxy listening before any tool
 * runs, and everything closed when the run ends. Other runs get nothing.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { RunService } from '../run/loop-hooks.js';
import { proxyEnv } from '../sandbox/egress-bridge.js';
import { egressAccess } from './egress-access.js';
import { EgressProxy } from './egress-proxy.js';

export function egressService(): RunService {
  let proxy: EgressProxy | null = null;
  let dir: string | null = null;
  let socket: string | null = null;
  let allowed: string[] = [];
  return {
    name: 'egress',
    provide({ rt, agent, environment, sessionId, env }) {
      if (environment.def.network !== 'limited' || !env.posture?.network_closed) return {};
      const access = egressAccess({ def: environment.def, mcpServers: agent.def.mcp_servers, network: rt.deps.network, runtimeDir: rt.store.paths(sessionId).runtime, redactor: env.redactor });
      // Owner-only directory: the socket is the sandbox's door, no one else's (a Unix socket path is at most 107 bytes: tmpdir, not the home).
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'openboa-egress-'));
      socket = path.join(dir, 'egress.sock');
      proxy = new EgressProxy({ rules: access.rules, clock: rt.deps.clock, log: access.log });
      allowed = environment.def.allowed_hosts;
      const at = socket;
      return { sandboxSpec: (spec) => ({ ...spec, egress: at, env: { ...spec.env, ...proxyEnv() } }) };
    },
    async open() {
      if (proxy && socket) await proxy.listen(socket);
    },
    startFiles(ctx) {
      if (!proxy) return;
      ctx.files.json('network.json', {
        network: 'limited',
        proxy: proxyEnv().HTTP_PROXY,
        allowed_hosts: allowed,
        allow_package_managers: ctx.environment.def.allow_package_managers,
        allow_mcp_servers: ctx.environment.def.allow_mcp_servers,
        log: '/runtime/egress.jsonl',
      });
    },
    close() {
      proxy?.close();
      proxy = null;
      if (dir) fs.rmSync(dir, { recursive: true, force: true });
      dir = null;
    },
  };
}
