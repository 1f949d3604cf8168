/**
 * The secrets an agent's shared state hides (docs/runs.md, "Environment and
 * secrets"). An agent's memory directory and its versions, its learnings and
 * the logs of its other sessions outlive the session that wrote them and are
 * read back by its other sessions, which may run in another environment, and
 * by people later. So a run redacts with every secret any session of its
 * agent can resolve, not only its own, and so do `openboa memory` and
 * `openboa learnings`:
 *
 * - each environment of the home (environments/<id>.yaml: a session may be
 *   created in any of them): every `{secret: {env: VAR}}` whose variable is
 *   set in the given process environment (a session's overrides are plain
 *   values, never secret references);
 * - the agent's model key (its provider's `secrets`) and its MCP servers'
 *   secrets.
 *
 * Contracts: resolved in the process that asks (the daemon for a run, the
 * CLI for a command), so a variable that process does not have is a secret
 * it cannot know and does not redact. A definition that does not load is
 * left out. Never throws.
 */
import { listEnvironments, loadAgent, loadEnvironment } from '../definitions/definitions.js';
import type { Home } from '../foundation/home.js';
import { resolveMcpServers } from '../mcp/mcp-hub.js';
import { builtinModels, type ModelRegistry } from '../model/registry.js';
import { mergeSecrets, resolveSecrets } from './environment.js';

/** Every environment's secrets, by the name each gives it (a value named twice is kept once). */
export function environmentSecrets(home: Home, processEnv: NodeJS.ProcessEnv): Record<string, string> {
  let out: Record<string, string> = {};
  for (const id of listEnvironments(home)) {
    try {
      out = mergeSecrets(out, resolveSecrets(loadEnvironment(home, id).def, {}, processEnv).secrets);
    } catch {
      // a broken environment runs no session
    }
  }
  return out;
}

/** environmentSecrets, then the agent's model key and MCP servers' secrets. */
export function agentSecrets(home: Home, agentId: string, processEnv: NodeJS.ProcessEnv, models: ModelRegistry = builtinModels): Record<string, string> {
  let out = environmentSecrets(home, processEnv);
  try {
    const agent = loadAgent(home, agentId);
    out = mergeSecrets(out, resolveMcpServers(agent.def.mcp_servers, processEnv).secrets);
    try {
      out = mergeSecrets(out, models[agent.def.provider]?.(agent, home, processEnv).secrets ?? {});
    } catch {
      // a provider that cannot be made here holds no key here
    }
  } catch {
    // an agent that does not load: the environments' secrets alone
  }
  return out;
}
