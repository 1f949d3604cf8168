import { SessionSearch } from '../../core/search/session-search.js';
import { SEARCH_LIMIT_DEFAULT, SEARCH_LIMIT_MAX } from '../../core/schema/index.js';
import { notFound } from '../../core/foundation/errors.js';
import fs from 'node:fs';
import type { CliContext, CommandInput } from '../command.js';
import { UsageError } from '../command.js';

export async function run(ctx: CliContext, { args, rest, flags }: CommandInput): Promise<number | void> {
  const query = [args.query ?? '', ...rest].join(' ').trim();
  if (query === '') throw new UsageError('search needs words to look for: openboa search <query>');
  const agent = typeof flags.agent === 'string' ? flags.agent : null;
  if (agent !== null && !fs.existsSync(ctx.home.agentFile(agent))) throw notFound(`agent ${agent} not found (no ${ctx.home.agentFile(agent)}; openboa agents lists them)`);
  let limit = SEARCH_LIMIT_DEFAULT;
  if (typeof flags.limit === 'string') {
    limit = Number(flags.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > SEARCH_LIMIT_MAX) throw new UsageError(`--limit: expected a whole number from 1 to ${SEARCH_LIMIT_MAX}, got ${flags.limit}`);
  }
  const search = SessionSearch.open(ctx.store, ctx.deps.env);
  try {
    const caught = search.catchUp(agent);
    const hits = search.search(query, { agentId: agent, limit });
    if (ctx.json) return ctx.out.data({ query, agent_id: agent, hits, skipped: caught.problems });
    for (const p of caught.problems) ctx.out.warn(`${p.source} not indexed: ${p.message}`);
    if (caught.busy) ctx.out.warn(`the search index is being written by another process: ${caught.deferred} session(s) not caught up; the results may be incomplete`);
    if (hits.length === 0) return ctx.out.line(`no candidates for ${JSON.stringify(query)}${agent ? ` in agent ${agent}'s sessions` : ''}`);
    for (const h of hits) {
      ctx.out.line(`${h.session_id}  ${h.event_id}  ${h.kind}  ${h.created_at.slice(0, 19)}  score ${h.score}${agent ? '' : `  agent ${h.agent_id}`}${h.title ? `  "${h.title}"` : ''}`);
      ctx.out.line(`  ${h.snippet}`);
    }
    ctx.out.line('(candidates from the search index; the session\'s log is the truth: openboa events <session>)');
  } finally {
    search.close();
  }
}
