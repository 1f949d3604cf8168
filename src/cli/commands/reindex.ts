import { SessionSearch } from '../../core/search/session-search.js';
import { searchDbFile } from '../../core/search/search-db.js';
import type { CliContext, CommandInput } from '../command.js';

export async function run(ctx: CliContext, _input: CommandInput): Promise<number | void> {
  const started = Date.now();
  const search = SessionSearch.open(ctx.store, ctx.deps.env);
  try {
    const r = search.rebuild();
    const { rows, sessions } = search.stats();
    const seconds = (Date.now() - started) / 1000;
    if (ctx.json) return ctx.out.data({ index: searchDbFile(ctx.home), sessions, rows, seconds, skipped: r.problems });
    for (const p of r.problems) ctx.out.warn(`${p.source} not indexed: ${p.message}`);
    ctx.out.line(`rebuilt ${searchDbFile(ctx.home)} from the logs: ${rows} row(s) from ${sessions} session(s) in ${seconds.toFixed(1)} s`);
  } finally {
    search.close();
  }
}
