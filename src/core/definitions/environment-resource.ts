/**
 * environments/<id>.yaml as the Managed Agents `environment` resource
 * (docs/http.md, "Agents and environments"). The hosted API's `cloud`
 * config says what the sandbox may reach; ours says `network: none | host`:
 * `{networking: {type: "unrestricted"}}` is `host`, and `limited` with no
 * allowed host, MCP servers or package managers is `none`. Anything
 * narrower (an allow-list of hosts) or packages (read from the YAML's
 * `packages`, written only there) is refused with the field named.
 * The sandbox, mounts, env and shell settings of the YAML are kept as they
 * are. A resource carries `version` as agents do (the hosted API has none
 * on environments), and an update may send it.
 */
import * as z from 'zod';
import type YAML from 'yaml';
import type { BetaEnvironment } from '@anthropic-ai/sdk/resources/beta/environments/environments';
import { DefinitionName, Metadata, type EnvironmentDefinition } from '../schema/index.js';
import { invalidField } from '../foundation/errors.js';
import type { DefinitionState } from './definition-store.js';
import { setOrDelete } from './agent-resource.js';

const empty = z.array(z.string()).max(0, 'packages are set in environments/<id>.yaml (npm and apt), not through the API').nullish();
const Networking = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('unrestricted') }),
  z.strictObject({
    type: z.literal('limited'),
    allowed_hosts: z.array(z.string()).max(0, 'an allow-list of hosts is not supported by openboa: use limited (no network) or unrestricted').nullish(),
    allow_mcp_servers: z.literal(false).nullish(),
    allow_package_managers: z.literal(false).nullish(),
  }),
]);
const Config = z.strictObject({
  type: z.literal('cloud'),
  networking: Networking.nullish(),
  packages: z.strictObject({ type: z.literal('packages').optional(), apt: empty, cargo: empty, gem: empty, go: empty, npm: empty, pip: empty }).nullish(),
});

export const EnvironmentCreateBody = z.strictObject({
  name: DefinitionName,
  config: Config.nullish(),
  description: z.string().max(2048).nullish(),
  metadata: Metadata.optional(),
  scope: z.null().optional(),
});
export type EnvironmentCreateBody = z.infer<typeof EnvironmentCreateBody>;

export const EnvironmentUpdateBody = z.strictObject({
  name: DefinitionName.nullish(),
  config: Config.nullish(),
  description: z.string().max(2048).nullish(),
  metadata: z.record(z.string().min(1).max(64), z.string().max(512).nullable()).nullish(),
  scope: z.null().optional(),
  version: z.number().int().positive().optional(),
});
export type EnvironmentUpdateBody = z.infer<typeof EnvironmentUpdateBody>;

export function environmentEdit(body: EnvironmentCreateBody | EnvironmentUpdateBody): (doc: YAML.Document) => void {
  return (doc) => {
    setOrDelete(doc, ['description'], body.description);
    const net = body.config?.networking;
    if (net) doc.setIn(['network'], net.type === 'unrestricted' ? 'host' : 'none');
    if (body.config === null) throw invalidField('config', 'config: expected a cloud config, not null');
  };
}

export function toEnvironment(s: DefinitionState): BetaEnvironment & { version: number } {
  const def = s.def as EnvironmentDefinition;
  return {
    type: 'environment',
    id: s.id,
    name: s.name,
    description: def.description || null,
    config: {
      type: 'cloud',
      networking: def.network === 'host' ? { type: 'unrestricted' } : { type: 'limited', allowed_hosts: [], allow_mcp_servers: false, allow_package_managers: false },
      packages: { type: 'packages', apt: def.packages.apt, cargo: [], gem: [], go: [], npm: def.packages.npm, pip: [] },
    },
    metadata: s.metadata,
    version: s.version,
    created_at: s.created_at,
    updated_at: s.updated_at,
    archived_at: s.archived_at,
  };
}
