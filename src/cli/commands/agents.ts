import type { CliContext } from '../command.js';
import { loadAllAgents, loadAllEnvironments } from '../definitions-list.js';
import { probeMcpServers, type ProbeResult } from '../../core/mcp/mcp-probe.js';
import { safeText } from '../safe-text.js';
import { mcpNetwork } from '../../core/run/environment.js';

export async function run(ctx: CliContext): Promise<number | void> {
  const agents = loadAllAgents(ctx.home);
  const envs = loadAllEnvironments(ctx.home);
  // Each agent's MCP servers are started once, briefly and all at once (mcp-probe.ts), to say whether they start.
  const probes = new Map<string, ProbeResult[]>();
  await Promise.all(
    agents.map(async (a) => {
      if (!a.def || a.def.mcp_servers.length === 0) return;
      const envDef = envs.find((e) => e.id === a.def.environment)?.def;
      const network = envDef ? mcpNetwork(envDef) : 'none';
      probes.set(a.id, await probeMcpServers(a.def.mcp_servers, { daemonEnv: ctx.deps.env, cwd: ctx.home.agentDir(a.id), network, signal: ctx.signal }));
    }),
  );
  const agentList = agents.map((a) =>
    a.def
      ? { id: a.id, provider: a.def.provider, model: a.def.model, environment: a.def.environment, description: a.def.description, mcp_servers: probes.get(a.id) ?? [] }
      : { id: a.id, error: a.error },
  );
  const envList = envs.map((e) =>
    e.def ? { id: e.id, sandbox: e.def.sandbox, network: e.def.network, description: e.def.description } : { id: e.id, error: e.error },
  );
  if (ctx.json) {
    ctx.out.data({ agents: agentList, environments: envList });
    return;
  }
  const { table, clipToWidth } = await import('../width.js');
  const broken = (msg: string) => ctx.out.paint('red', `error: ${msg}`);
  // A description is clipped so its row stays one line; an error is shown whole.
  const about = (text: string) => clipToWidth(text.replace(/\s+/g, ' ').trim(), 60);
  const servers = (list: ProbeResult[]) => list.map((s) => (s.started ? `${s.name} (${s.tools} tools)` : ctx.out.paint('red', `${s.name} (fails)`))).join(', ');
  const anyMcp = [...probes.values()].some((l) => l.length > 0);
  ctx.out.line(
    agentList.length
      ? table(
          ['AGENT', 'PROVIDER', 'MODEL', 'ENVIRONMENT', ...(anyMcp ? ['MCP SERVERS'] : []), 'DESCRIPTION'],
          agentList.map((a) => ('error' in a ? [a.id, '', '', '', ...(anyMcp ? [''] : []), broken(a.error ?? '')] : [a.id, a.provider, a.model, a.environment, ...(anyMcp ? [servers(a.mcp_servers)] : []), about(a.description)])),
        )
      : `no agents in ${ctx.home.agentsDir} (openboa init creates the bundled demo and claude agents)`,
  );
  // Why a server does not start, whole (it may quote the server's stderr: made safe for the terminal).
  for (const a of agentList) {
    if ('error' in a) continue;
    for (const s of a.mcp_servers) if (s.error) ctx.out.line(broken(`agent ${a.id}: MCP server ${s.name} does not start: ${safeText(s.error)}`));
    for (const s of a.mcp_servers) if (s.warning) ctx.out.line(`warning: agent ${a.id}: MCP server ${s.name}: ${safeText(s.warning)}`);
  }
  ctx.out.line();
  ctx.out.line(
    envList.length
      ? table(
          ['ENVIRONMENT', 'SANDBOX', 'NETWORK', 'DESCRIPTION'],
          envList.map((e) => ('error' in e ? [e.id, '', '', broken(e.error ?? '')] : [e.id, e.sandbox, e.network, about(e.description)])),
        )
      : `no environments in ${ctx.home.environmentsDir} (openboa init creates environments/local.yaml)`,
  );
}
