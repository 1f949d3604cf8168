/**
 * Creating a session: the one operation on sessions that reads the agent and
 * environment definitions (and so the YAML parser), kept apart from
 * session-ops.ts so the others load without them.
 */
import { loadAgent, loadEnvironment } from './definitions.js';
import type { SessionStore } from './store/session-store.js';
import type { SessionSnapshot } from './schema/index.js';

export interface CreateInput {
  agent: string;
  env?: string | undefined;
  title?: string | undefined;
  parentSessionId?: string | undefined;
  /** Extra environment variables for this session only, layered over the environment's. */
  env_overrides?: Record<string, string> | undefined;
}

/** Creates a session after checking that its agent and environment load. */
export function createSession(store: SessionStore, input: CreateInput): SessionSnapshot {
  const agent = loadAgent(store.home, input.agent);
  const envId = input.env ?? agent.def.environment;
  loadEnvironment(store.home, envId);
  return store.create({
    agentId: agent.id,
    environmentId: envId,
    title: input.title ?? null,
    parentSessionId: input.parentSessionId ?? null,
    ...(input.env_overrides ? { overrides: { env: input.env_overrides } } : {}),
  });
}
