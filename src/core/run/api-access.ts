/**
 * The home's HTTP API, reachable from a run's sandbox (a RunService,
 * registered in default-hooks.ts): when a server listens for this home
 * (`<home>/.openboa/api.json`, written by it) and the environment lets the
 * sandbox reach it (`network: host`), the sandbox gets OPENBOA_API_URL and
 * OPENBOA_RUN_TOKEN, a token bound to the agent, the session and the run
 * (run-token.ts). The token is a secret of the run (redacted from what it
 * writes); it is worth nothing once the run's lease is gone.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Home } from '../foundation/home.js';
import { ApiEndpoint } from '../schema/index.js';
import type { RunService } from './loop-hooks.js';
import { mintRunToken } from './run-token.js';

export const apiEndpointFile = (home: Home) => path.join(home.root, '.openboa', 'api.json');

/** Where the home's API listens; null when no live server said so. */
export function readApiEndpoint(home: Home): ApiEndpoint | null {
  try {
    const r = ApiEndpoint.safeParse(JSON.parse(fs.readFileSync(apiEndpointFile(home), 'utf8')));
    if (!r.success) return null;
    process.kill(r.data.pid, 0); // throws when the server's process is gone
    return r.data;
  } catch {
    return null;
  }
}

export function apiAccess(): RunService {
  let token: string | null = null;
  let url: string | null = null;
  return {
    name: 'api-access',
    secrets(rt, agent, run): Record<string, string> {
      const at = readApiEndpoint(rt.home);
      if (!at) return {};
      url = at.url;
      token = mintRunToken(rt.home, { agentId: agent.id, sessionId: run.sessionId, runId: run.runId });
      return { OPENBOA_RUN_TOKEN: token };
    },
    sandboxEnv(x): Record<string, string> {
      // A sandbox without the host's network cannot reach a server on its loopback.
      if (!token || !url || x.env.network !== 'host') return {};
      return { OPENBOA_API_URL: url, OPENBOA_RUN_TOKEN: token };
    },
  };
}
