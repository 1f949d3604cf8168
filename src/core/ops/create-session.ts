/**
 * Creating a session: the one operation on sessions that reads the agent and
 * environment definitions (and so the YAML parser), kept apart from
 * session-ops.ts so the others load without them.
 */
import { loadAgent, loadEnvironment } from '../definitions/definitions.js';
import type { SessionStore } from '../store/session-store.js';
import type { SessionSnapshot } from '../schema/index.js';

export interface CreateInput {
  agent: string;
  env?: string | undefined;
  title?: string | undefined;
  parentSessionId?: string | undefined;
  /** The tightest max_spawn_depth of the new session's line of ancestors: binds its own spawns. */
  treeMaxDepth?: number | undefined;
  /** The tightest max_tree_sessions and max_spawns_per_minute of that line (spawn-limits.ts). */
  treeMaxSessions?: number | undefined;
  treeMaxSpawnsPerMinute?: number | undefined;
  /** Extra environment variables for this session only, layered over the environment's. */
  env_overrides?: Record<string, string> | undefined;
  /** Key-value pairs attached to the session (at most 16; schema/common.ts Metadata). */
  metadata?: Record<string, string> | undefined;
}

const finite = <K extends string>(key: K, v: number | undefined) => (v !== undefined && Number.isFinite(v) ? ({ [key]: v } as Record<K, number>) : {});

/** Creates a session after checking that its agent and environment load; a child records its depth (its parent's + 1). */
export function createSession(store: SessionStore, input: CreateInput): SessionSnapshot {
  const agent = loadAgent(store.home, input.agent);
  const envId = input.env ?? agent.def.environment;
  loadEnvironment(store.home, envId);
  return store.create({
    agentId: agent.id,
    environmentId: envId,
    title: input.title ?? null,
    parentSessionId: input.parentSessionId ?? null,
    // A child is one deeper than its parent (which must exist).
    ...(input.parentSessionId ? { depth: store.snapshot(input.parentSessionId).depth + 1 } : {}),
    // A tree limit that binds nothing (no ancestor set one) is not recorded.
    ...finite('treeMaxDepth', input.treeMaxDepth),
    ...finite('treeMaxSessions', input.treeMaxSessions),
    ...finite('treeMaxSpawnsPerMinute', input.treeMaxSpawnsPerMinute),
    ...(input.env_overrides ? { overrides: { env: input.env_overrides } } : {}),
    ...(input.metadata ? { metadata: input.metadata } : {}),
  });
}
