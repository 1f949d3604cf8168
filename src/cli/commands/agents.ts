import type { CliContext } from '../command.js';
import { loadAllAgents, loadAllEnvironments } from '../definitions-list.js';

export async function run(ctx: CliContext): Promise<number | void> {
  const agentList = loadAllAgents(ctx.home).map((a) =>
    a.def
      ? { id: a.id, provider: a.def.provider, model: a.def.model, environment: a.def.environment, description: a.def.description }
      : { id: a.id, error: a.error },
  );
  const envList = loadAllEnvironments(ctx.home).map((e) =>
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
  ctx.out.line(
    agentList.length
      ? table(
          ['AGENT', 'PROVIDER', 'MODEL', 'ENVIRONMENT', 'DESCRIPTION'],
          agentList.map((a) => ('error' in a ? [a.id, '', '', '', broken(a.error ?? '')] : [a.id, a.provider, a.model, a.environment, about(a.description)])),
        )
      : `no agents in ${ctx.home.agentsDir} (openboa init creates the bundled demo and claude agents)`,
  );
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
