/**
 * What one run may reach on the network, for the two ways out the daemon
 * offers: the egress proxy of a `network: limited` sandbox and the web_fetch
 * tool. Both check destinations with the same rules (destination.ts) and
 * log to the same runtime/egress.jsonl.
 */
import type { Redactor } from '../foundation/redact.js';
import type { EnvironmentDefinition, McpServer, NetworkPosture } from '../schema/index.js';
import { AllowList } from './allow-list.js';
import type { DestinationRules } from './destination.js';
import { egressLog, type EgressLogger } from './egress-log.js';
import type { NetworkPort } from './network-port.js';

export interface EgressAccess {
  network: NetworkPosture;
  rules: DestinationRules;
  log: EgressLogger;
}

export interface EgressAccessInput {
  def: EnvironmentDefinition;
  mcpServers: readonly McpServer[];
  network: NetworkPort;
  runtimeDir: string;
  redactor: Pick<Redactor, 'text'>;
}

export function egressAccess(i: EgressAccessInput): EgressAccess {
  return {
    network: i.def.network,
    rules: { allow: AllowList.of(i.def, i.mcpServers), ownPorts: i.network.ownPorts, resolve: i.network.resolve },
    log: egressLog(i.runtimeDir, i.redactor),
  };
}
