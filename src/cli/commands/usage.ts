import { homeUsage, sessionUsage, usageTree, type UsageNode, type UsageTotals } from '../../core/views/usage-report.js';
import type { CliContext, CommandInput } from '../command.js';
import { UsageError } from '../command.js';

const usd = (x: number) => `$${x.toFixed(6)}`;
const n = (x: number) => x.toLocaleString('en-US');
const COLUMNS = ['REQUESTS', 'INPUT', 'OUTPUT', 'CACHE WRITE', 'CACHE READ', 'COST'];
const cells = (u: UsageTotals) => [n(u.model_requests), n(u.input_tokens), n(u.output_tokens), n(u.cache_creation_input_tokens), n(u.cache_read_input_tokens), usd(u.cost_usd)];

export async function run(ctx: CliContext, { args, flags }: CommandInput): Promise<number | void> {
  const id = args.id;
  const { table } = await import('../width.js');
  if (flags.tree && id === undefined) throw new UsageError('--tree needs a session id: openboa usage <id> --tree');

  if (id === undefined) {
    const h = homeUsage(ctx.store);
    if (ctx.json) return ctx.out.data(h);
    if (h.total.sessions === 0 && h.unreadable.length === 0) return ctx.out.line(`no sessions in ${ctx.home.sessionsDir}`);
    ctx.out.line(table(['AGENT', 'SESSIONS', ...COLUMNS], [...h.agents.map((a) => [a.agent_id, n(a.sessions), ...cells(a.usage)]), ['total', n(h.total.sessions), ...cells(h.total.usage)]]));
    for (const u of h.unreadable) ctx.out.warn(`session ${u.session_id} could not be read: ${u.error}`);
    return;
  }

  if (!flags.tree) {
    const s = sessionUsage(ctx.store, id);
    if (ctx.json) return ctx.out.data(s);
    ctx.out.line(`session ${s.session_id} (agent ${s.agent_id}, ${ctx.out.status(s.status)})`);
    ctx.out.line(table(['', ...COLUMNS], [['own', ...cells(s.usage)], ['with descendants', ...cells(s.tree_usage)]]));
    return;
  }

  const tree = usageTree(ctx.store, id);
  if (ctx.json) return ctx.out.data(tree);
  const rows: string[][] = [];
  const add = (node: UsageNode, indent: string) => {
    if ('error' in node) rows.push([`${indent}${node.session_id}`, '?', ctx.out.status('unreadable'), '', '', node.error]);
    else rows.push([`${indent}${node.session_id}`, node.agent_id, ctx.out.status(node.status), n(node.usage.model_requests), usd(node.usage.cost_usd), usd(node.tree_usage.cost_usd)]);
    for (const c of node.children) add(c, `${indent}  `);
  };
  add(tree, '');
  ctx.out.line(table(['SESSION', 'AGENT', 'STATUS', 'REQUESTS', 'OWN COST', 'TREE COST'], rows));
}
