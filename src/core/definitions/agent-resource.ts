/**
 * agent.yaml as the Managed Agents `agent` resource (docs/http.md,
 * "Agents and environments"): the request bodies of create and update, what
 * each field of them does to the YAML, and the object a client reads.
 *
 * What maps: `name` and `metadata` (kept in the history), `description`,
 * `system`, `model` (its id), `tools` (the `agent_toolset_20260401`
 * configs of bash, read, write, edit, glob and grep become `tools:`
 * permissions; `custom` tools become `custom_tools`; an `mcp_toolset`'s
 * default permission becomes its server's `permission`) and `mcp_servers`
 * (URL servers). What openboa has no equivalent for (skills, multiagent,
 * an execution identity, a model's effort or speed, the `auto` policy,
 * web tools) is refused with the field named, never ignored. Everything
 * else in agent.yaml (provider, limits, context, stdio MCP servers, ...) is
 * kept as it is by an update.
 */
import * as z from 'zod';
import YAML from 'yaml';
import type { BetaManagedAgentsAgent, BetaManagedAgentsAgentToolConfig } from '@anthropic-ai/sdk/resources/beta/agents/agents';
import { CustomTool, DefinitionName, Metadata, type AgentDefinition } from '../schema/index.js';
import { invalidField } from '../foundation/errors.js';
import type { DefinitionState } from './definition-store.js';

/** The built-in tools the hosted toolset and ours share; openboa's others keep their agent.yaml settings. */
export const TOOLSET_TOOLS = ['bash', 'read', 'write', 'edit', 'glob', 'grep'] as const;
const WEB_TOOLS = ['web_fetch', 'web_search'] as const;

const Policy = z.strictObject({ type: z.enum(['always_allow', 'always_ask', 'auto']) });
const DefaultConfig = z.strictObject({ enabled: z.boolean().nullish(), permission_policy: Policy.nullish() });
const ToolConfig = z.looseObject({
  name: z.enum([...TOOLSET_TOOLS, ...WEB_TOOLS]),
  type: z.string().optional(),
  enabled: z.boolean().nullish(),
  permission_policy: Policy.nullish(),
});
const Toolset = z.strictObject({ type: z.literal('agent_toolset_20260401'), configs: z.array(ToolConfig).optional(), default_config: DefaultConfig.nullish() });
const McpToolset = z.strictObject({
  type: z.literal('mcp_toolset'),
  mcp_server_name: z.string().min(1),
  configs: z.array(z.unknown()).max(0, 'per-tool MCP configs are not supported here: set the default_config').optional(),
  default_config: DefaultConfig.nullish(),
});
const Custom = CustomTool.extend({ type: z.literal('custom') });
const ToolParam = z.discriminatedUnion('type', [Toolset, McpToolset, Custom]);
const McpServerParam = z.strictObject({ name: z.string().min(1), type: z.literal('url'), url: z.url({ protocol: /^https?$/ }) });
const ModelParam = z.union([
  z.string().min(1),
  z.strictObject({
    id: z.string().min(1),
    effort: z.null().optional(),
    inference_geo: z.null().optional(),
    speed: z.enum(['standard']).nullish(),
  }),
]);
const unsupported = (what: string) => z.unknown().refine((v) => v === undefined || v === null || (Array.isArray(v) && v.length === 0), `${what} are not supported by openboa`);

const common = {
  description: z.string().max(2048).nullish(),
  system: z.string().max(100_000).nullish(),
  tools: z.array(ToolParam).max(256).nullish(),
  mcp_servers: z.array(McpServerParam).max(16).nullish(),
  skills: unsupported('skills').optional(),
  multiagent: unsupported('multiagent configurations').optional(),
  execution_identity: z.union([z.null(), z.strictObject({ type: z.literal('service_account') })]).optional(),
};

export const AgentCreateBody = z.strictObject({ name: DefinitionName, model: ModelParam, metadata: Metadata.optional(), ...common });
export type AgentCreateBody = z.infer<typeof AgentCreateBody>;

export const AgentUpdateBody = z.strictObject({
  name: DefinitionName.optional(),
  model: ModelParam.optional(),
  metadata: z.record(z.string().min(1).max(64), z.string().max(512).nullable()).nullish(),
  version: z.number().int().positive().optional(),
  ...common,
});
export type AgentUpdateBody = z.infer<typeof AgentUpdateBody>;

/** The YAML edit a create or update body makes: only the fields it carries are touched. */
export function agentEdit(body: AgentCreateBody | AgentUpdateBody): (doc: YAML.Document) => void {
  return (doc) => {
    setOrDelete(doc, ['description'], body.description);
    setOrDelete(doc, ['system'], body.system);
    if (body.model !== undefined) doc.setIn(['model'], typeof body.model === 'string' ? body.model : body.model.id);
    const current = (doc.toJS() ?? {}) as Record<string, unknown>;
    const servers = Array.isArray(current.mcp_servers) ? (current.mcp_servers as Array<Record<string, unknown>>) : [];
    let nextServers = servers;
    if (body.mcp_servers !== undefined) {
      // Stdio servers have no API shape and stay; a URL server keeps its headers and timeouts by name.
      const stdio = servers.filter((s) => 'command' in s);
      const given = (body.mcp_servers ?? []).map((s) => ({ ...(servers.find((o) => o.name === s.name && 'url' in o) ?? {}), name: s.name, url: s.url }));
      for (const s of given) if (stdio.some((o) => o.name === s.name)) throw invalidField('mcp_servers', `mcp_servers: "${s.name}" is already the name of a stdio server in agent.yaml`);
      nextServers = [...stdio, ...given];
    }
    if (body.tools !== undefined) {
      const tools = body.tools ?? [];
      const toolset = tools.find((t) => t.type === 'agent_toolset_20260401');
      const perms: Record<string, unknown> = { ...((current.tools as Record<string, unknown> | undefined) ?? {}) };
      for (const name of TOOLSET_TOOLS) {
        const cfg = toolset?.configs?.find((c) => c.name === name);
        const enabled = toolset ? (cfg?.enabled ?? toolset.default_config?.enabled ?? true) : false;
        const policy = cfg?.permission_policy?.type ?? toolset?.default_config?.permission_policy?.type ?? 'always_allow';
        if (policy === 'auto') throw invalidField('tools', `tools: the "auto" permission policy (${name}) is not supported by openboa: use always_allow or always_ask`);
        const permission = enabled ? policy : 'disabled';
        if (permission === 'always_allow') delete perms[name];
        else perms[name] = { permission };
      }
      for (const c of toolset?.configs ?? []) {
        if ((WEB_TOOLS as readonly string[]).includes(c.name) && c.enabled !== false) throw invalidField('tools', `tools: ${c.name} is not a tool openboa has: set enabled: false or leave it out`);
      }
      setOrDelete(doc, ['tools'], Object.keys(perms).length ? perms : null);
      const custom = tools.filter((t) => t.type === 'custom').map(({ type: _type, ...t }) => t);
      setOrDelete(doc, ['custom_tools'], custom.length ? custom : null);
      const byServer = new Map(tools.flatMap((t) => (t.type === 'mcp_toolset' ? [[t.mcp_server_name, t] as const] : [])));
      for (const [name, t] of byServer) {
        if (!nextServers.some((s) => s.name === name)) throw invalidField('tools', `tools: mcp_toolset names "${name}", which is not one of the agent's mcp_servers`);
        if (t.default_config?.permission_policy?.type === 'auto') throw invalidField('tools', 'tools: the "auto" permission policy is not supported by openboa');
        if (t.default_config?.enabled === false) throw invalidField('tools', `tools: a disabled mcp_toolset ("${name}") is not supported: remove the server instead`);
      }
      nextServers = nextServers.map((s) => {
        const p = byServer.get(String(s.name))?.default_config?.permission_policy?.type;
        return p ? { ...s, permission: p } : s;
      });
    }
    if (nextServers !== servers || body.tools !== undefined) setOrDelete(doc, ['mcp_servers'], nextServers.length ? nextServers : null);
  };
}

/** The resource a client reads. */
export function toAgent(s: DefinitionState): BetaManagedAgentsAgent & { provider: string } {
  const def = s.def as AgentDefinition;
  const policy = (p: 'always_allow' | 'always_ask') => ({ type: p });
  const toolset = {
    type: 'agent_toolset_20260401' as const,
    default_config: { enabled: true, permission_policy: policy('always_allow') },
    configs: TOOLSET_TOOLS.map((name) => {
      const p = def.tools[name]?.permission ?? 'always_allow';
      return { name, type: name, enabled: p !== 'disabled', permission_policy: policy(p === 'always_ask' ? 'always_ask' : 'always_allow') } as BetaManagedAgentsAgentToolConfig;
    }),
  };
  const urlServers = def.mcp_servers.flatMap((m) => ('url' in m ? [m] : []));
  return {
    type: 'agent',
    id: s.id,
    name: s.name,
    description: def.description || null,
    system: def.system || null,
    model: { id: def.model },
    provider: def.provider,
    tools: [
      toolset,
      ...urlServers.map((m) => ({ type: 'mcp_toolset' as const, mcp_server_name: m.name, configs: [], default_config: { enabled: true, permission_policy: policy(m.permission) } })),
      ...def.custom_tools.map((t) => ({ type: 'custom' as const, name: t.name, description: t.description, input_schema: t.input_schema })),
    ],
    mcp_servers: urlServers.map((m) => ({ name: m.name, type: 'url' as const, url: m.url })),
    skills: [],
    multiagent: null,
    execution_identity: { type: 'service_account' },
    metadata: s.metadata,
    version: s.version,
    created_at: s.created_at,
    updated_at: s.updated_at,
    archived_at: s.archived_at,
  };
}

/** Sets a key, or removes it for null and ""; undefined leaves it alone. */
export function setOrDelete(doc: YAML.Document, p: string[], value: unknown): void {
  if (value === undefined) return;
  if (value === null || value === '') doc.deleteIn(p);
  else doc.setIn(p, value);
}
