/**
 * Every agent and environment of a home, each loaded on its own: a broken
 * definition is listed with its error (the file, the field, what was
 * expected) instead of stopping the listing. For `openboa agents` and
 * `openboa doctor`.
 */
import path from 'node:path';
import { listAgents, listEnvironments, loadAgent, loadEnvironment } from '../core/definitions/definitions.js';
import type { Home } from '../core/foundation/home.js';
import type { AgentDefinition, EnvironmentDefinition } from '../core/schema/index.js';

export type AgentEntry = { id: string; def: AgentDefinition; error?: undefined } | { id: string; def?: undefined; error: string };
export type EnvironmentEntry = { id: string; def: EnvironmentDefinition; error?: undefined } | { id: string; def?: undefined; error: string };

const messageOf = (e: unknown) => (e instanceof Error ? e.message : String(e));

/**
 * Every agent, each with its error if it does not load, or if its
 * environment does not (a run of it would fail with invalid_definition, so
 * the listing says so too, naming the agent's file and field).
 */
export function loadAllAgents(home: Home): AgentEntry[] {
  return listAgents(home).map((id): AgentEntry => {
    let def: AgentDefinition;
    try {
      def = loadAgent(home, id).def;
    } catch (e) {
      return { id, error: messageOf(e) };
    }
    try {
      loadEnvironment(home, def.environment);
    } catch (e) {
      return { id, error: `${path.relative(home.root, home.agentFile(id))}: environment: ${JSON.stringify(def.environment)} does not load: ${messageOf(e)}` };
    }
    return { id, def };
  });
}

export function loadAllEnvironments(home: Home): EnvironmentEntry[] {
  return listEnvironments(home).map((id): EnvironmentEntry => {
    try {
      return { id, def: loadEnvironment(home, id).def };
    } catch (e) {
      return { id, error: messageOf(e) };
    }
  });
}
