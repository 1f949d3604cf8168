/**
 * An agent's roster (agent.yaml `delegates`, docs/delegation.md): the agents
 * it may hand work to. `self` names the agent itself. A roster naming an
 * agent that has no agents/<id>/agent.yaml is a definition error naming the
 * file, the line and the field, checked each time the agent loads, so an
 * agent removed later is caught at the next run.
 */
import fs from 'node:fs';
import YAML, { LineCounter } from 'yaml';
import type { Home } from '../foundation/home.js';
import type { AgentDefinition } from '../schema/index.js';
import { invalidInput } from '../foundation/errors.js';

/** The agent ids `agentId` may spawn; [] without a roster. */
export function rosterOf(agentId: string, def: Pick<AgentDefinition, 'delegates'>): string[] {
  const r = def.delegates;
  if (r === undefined) return [];
  if (r === 'self') return [agentId];
  return [...new Set(r.map((x) => (x === 'self' ? agentId : x)))];
}

/** The line of `delegates[index]` (or of `delegates`) in the YAML text, when it can be found. */
function lineOf(text: string, index: number | null): number | null {
  try {
    const lc = new LineCounter();
    const doc = YAML.parseDocument(text, { lineCounter: lc });
    const node = doc.getIn(index === null ? ['delegates'] : ['delegates', index], true) as { range?: [number, number, number] } | undefined;
    return node?.range ? lc.linePos(node.range[0]).line : null;
  } catch {
    return null;
  }
}

/**
 * Throws invalid_input `<file>:<line>: delegates.<i>: unknown agent "<id>"`
 * for the first roster entry with no agent definition.
 */
export function checkRoster(home: Home, agentId: string, def: Pick<AgentDefinition, 'delegates'>, file: string, displayPath: string): void {
  const r = def.delegates;
  if (r === undefined || r === 'self') return;
  r.forEach((id, i) => {
    if (id === 'self' || id === agentId || fs.existsSync(home.agentFile(id))) return;
    let text = '';
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch {
      text = '';
    }
    const line = lineOf(text, i);
    throw invalidInput(`${displayPath}${line === null ? '' : `:${line}`}: delegates.${i}: unknown agent "${id}" (there is no agents/${id}/agent.yaml)`);
  });
}
