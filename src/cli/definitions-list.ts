/**
 * Every agent and environment of a home, each loaded on its own: a broken
 * definition is listed with its error (the file, the field, what was
 * expected) instead of stopping the listing. For `openboa agents` and
 * `openboa doctor`.
 */
import { listAgents, listEnvironments, loadAgent, loadEnvironment } from '../core/definitions.js';
import type { Home } from '../core/home.js';
import type { AgentDefinition, EnvironmentDefinition } from '../core/schema/index.js';

export type AgentEntry = { id: string; def: AgentDefinition; error?: undefined } | { id: string; def?: undefined; error: string };
export type EnvironmentEntry = { id: string; def: EnvironmentDefinition; error?: undefined } | { id: string; def?: undefined; error: string };

const messageOf = (e: unknown) => (e instanceof Error ? e.message : String(e));

export function loadAllAgents(home: Home): AgentEntry[] {
  return listAgents(home).map((id): AgentEntry => {
    try {
      return { id, def: loadAgent(home, id).def };
    } catch (e) {
      return { id, error: messageOf(e) };
    }
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
