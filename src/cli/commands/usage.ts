import { groupUsage, homeUsage, sessionUsage, USAGE_KEYS, usageBreakdown, usageTree, usageTreeIds, type UsageGroup, type UsageKey, type UsageNode, type UsageTotals } from '../../core/views/usage-report.js';
import type { CliContext, CommandInput, Flags } from '../command.js';
import { UsageError } from '../command.js';
import { parseDuration } from '../../core/schedule/duration.js';

const usd = (x: number) => `$${x.toFixed(6)}`;
const n = (x: number) => x.toLocaleString('en-US');
const COLUMNS = ['REQUESTS', 'INPUT', 'OUTPUT', 'CACHE WRITE', 'CACHE READ', 'COST'];
const cells = (u: UsageTotals) => [n(u.model_requests), n(u.input_tokens), n(u.output_tokens), n(u.cache_creation_input_tokens), n(u.cache_read_input_tokens), usd(u.cost_usd)];

export async function run(ctx: CliContext, { args, flags }: CommandInput): Promise<number | void> {
  const id = args.id;
  const { table } = await import('../width.js');
  if (flags.tree && id === undefined) throw new UsageError('--tree needs a session id: openboa usage <id> --tree');
  if (flags.by !== undefined || flags.since !== undefined || flags.csv === true) return breakdown(ctx, id, flags, table);

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

/** --by agent,model,day (any of them, in any order; default all three when --since or --csv asks for a breakdown). */
function byKeys(flags: Flags): UsageKey[] {
  const raw = flags.by;
  if (raw === undefined) return [...USAGE_KEYS];
  const named = String(raw).split(',').map((s) => s.trim()).filter(Boolean);
  const bad = named.filter((k) => !(USAGE_KEYS as readonly string[]).includes(k));
  if (bad.length || named.length === 0) throw new UsageError(`--by "${String(raw)}": expected a comma-separated list of ${USAGE_KEYS.join(', ')}`);
  return USAGE_KEYS.filter((k) => named.includes(k));
}

/** --since: a date or time (2026-11-01, an ISO time), or a duration back from now (7d, 12h). */
function sinceMs(ctx: CliContext, flags: Flags): number | undefined {
  const raw = flags.since;
  if (raw === undefined) return undefined;
  const text = String(raw).trim();
  const back = parseDuration(text);
  if (back !== null) return ctx.deps.clock.now() - back;
  const at = /^\d{4}-\d{2}-\d{2}/.test(text) ? Date.parse(/^\d{4}-\d{2}-\d{2}$/.test(text) ? `${text}T00:00:00Z` : text) : NaN;
  if (Number.isNaN(at)) throw new UsageError(`--since "${text}": expected a date (2026-11-01, UTC), an ISO time, or a duration back from now (7d, 12h)`);
  return at;
}

const CSV_COLUMNS = ['requests', 'input_tokens', 'output_tokens', 'cache_write_tokens', 'cache_read_tokens', 'cost_usd', 'unpriced_requests'];
const csvCell = (v: string) => (/[",\n\r]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v);

/** The usage by agent, model and day, of the home or of a session's tree; text, --json or --csv. */
function breakdown(ctx: CliContext, id: string | undefined, flags: Flags, table: (head: string[], rows: string[][]) => string): void {
  if (flags.csv === true && ctx.json) throw new UsageError('--csv and --json: choose one');
  const by = byKeys(flags);
  const since = sinceMs(ctx, flags);
  const b = usageBreakdown(ctx.store, { ...(id !== undefined ? { ids: usageTreeIds(ctx.store, id) } : {}), ...(since !== undefined ? { sinceMs: since } : {}) });
  const groups = groupUsage(b.rows, by);
  const total = groupUsage(b.rows, [])[0] ?? { usage: { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, model_requests: 0, cost_usd: 0 }, unpriced_requests: 0 };
  const keyCells = (g: UsageGroup) => by.map((k) => (k === 'agent' ? g.agent_id! : k === 'model' ? g.model! : g.day!));
  if (ctx.json) {
    return ctx.out.data({ scope: id ?? 'home', by, since: since !== undefined ? new Date(since).toISOString() : null, rows: groups, total, unpriced: b.unpriced, unreadable: b.unreadable });
  }
  if (flags.csv === true) {
    const lines = [[...by, ...CSV_COLUMNS].join(','), ...groups.map((g) => [...keyCells(g), String(g.usage.model_requests), String(g.usage.input_tokens), String(g.usage.output_tokens), String(g.usage.cache_creation_input_tokens), String(g.usage.cache_read_input_tokens), String(g.usage.cost_usd), String(g.unpriced_requests)].map(csvCell).join(','))];
    ctx.out.line(lines.join('\n'));
  } else if (groups.length === 0) {
    ctx.out.line(`no model requests${since !== undefined ? ` since ${new Date(since).toISOString()}` : ''}`);
  } else {
    const cost = (g: UsageGroup) => (g.unpriced_requests === 0 ? usd(g.usage.cost_usd) : g.unpriced_requests === g.usage.model_requests ? 'unknown' : `${usd(g.usage.cost_usd)} + unknown`);
    const row = (g: UsageGroup) => [n(g.usage.model_requests), n(g.usage.input_tokens), n(g.usage.output_tokens), n(g.usage.cache_creation_input_tokens), n(g.usage.cache_read_input_tokens), cost(g)];
    ctx.out.line(table([...by.map((k) => k.toUpperCase()), ...COLUMNS], [...groups.map((g) => [...keyCells(g), ...row(g)]), ['total', ...by.slice(1).map(() => ''), ...row(total)]]));
  }
  // Said, never counted as $0: a model with no price (agent.yaml pricing, or the default table) has an unknown cost.
  if (b.unpriced.length) ctx.out.warn(`no price for ${b.unpriced.join(', ')}: the cost of its requests is unknown, not counted (add it to agent.yaml pricing)`);
  for (const u of b.unreadable) ctx.out.warn(`session ${u.session_id} could not be read: ${u.error}`);
}
