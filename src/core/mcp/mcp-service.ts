/**
 * MCP in a run, as a run service (loop-hooks.ts): its servers' secrets,
 * the hub (its tools beside the built-ins, through mcp's ToolSource), its
 * servers started when the run opens and killed when it is over, and its
 * lines of runtime/tools.json. The hub itself is mcp-hub.ts; starting and
 * calling are mcp-run.ts.
 */
import type { RunService } from '../run/loop-hooks.js';
import type { ToolSource } from '../tools/tool-source.js';
import { McpHub, resolveMcpServers } from './mcp-hub.js';
import { runMcpTool, startMcpServers } from './mcp-run.js';

/** The hub as the catalog and the tool policy see it. */
export function mcpToolSource(hub: McpHub): ToolSource {
  return {
    get tools() {
      return hub.tools;
    },
    target: (name) => hub.target(name),
    unavailable: (server) => hub.serverState(server)?.error ?? null,
    record: (target, call) => ({ type: 'agent.mcp_tool_use', name: target.tool, mcp_server_name: target.server, input: call.input as Record<string, unknown>, model_tool_use_id: call.modelToolUseId, evaluated_permission: call.permission }),
    owns: (use) => use.type === 'agent.mcp_tool_use',
    execute: (ctx, journal, use) => (use.type === 'agent.mcp_tool_use' ? runMcpTool(hub, ctx, journal, use) : Promise.resolve({ isError: true, text: `${use.type} is not an MCP tool use` })),
  };
}

/** tools.json's lines about servers beyond their offered tools: one that did not start (with its error), each tool left out (and why). */
function serverEntries(hub: McpHub): Array<Record<string, unknown>> {
  const out: Array<Record<string, unknown>> = [];
  for (const s of hub.servers) {
    if (s.error) out.push({ name: `mcp__${s.name}__*`, kind: 'mcp', mcp_server_name: s.name, offered: false, error: s.error });
    for (const l of s.left_out) out.push({ name: `mcp__${s.name}__${l.tool}`, kind: 'mcp', mcp_server_name: s.name, offered: false, left_out: l.why });
  }
  return out;
}

export function mcpService(): RunService {
  let resolved: ReturnType<typeof resolveMcpServers> | null = null;
  let hub: McpHub | null = null;
  return {
    name: 'mcp',
    secrets(rt, agent) {
      resolved = resolveMcpServers(agent.def.mcp_servers, rt.deps.env);
      return resolved.secrets;
    },
    provide({ rt, agent, env }) {
      hub = new McpHub(resolved ?? resolveMcpServers(agent.def.mcp_servers, rt.deps.env), { daemonEnv: rt.deps.env, cwd: agent.dir, network: env.mcpNetwork, redact: (t) => env.redactor.text(t) });
      return { tools: mcpToolSource(hub) };
    },
    open: (ctx, journal) => (hub ? startMcpServers(hub, ctx, journal) : undefined),
    toolsFile: () => (hub ? serverEntries(hub) : []),
    close: () => hub?.killAll(),
  };
}
