import { updateSession } from '../../core/ops/session-ops.js';
import { UsageError, type CliContext, type CommandInput } from '../command.js';

export async function run(ctx: CliContext, { args, flags }: CommandInput): Promise<number | void> {
  const id = args.id as string;
  ctx.store.require(id);
  let budget: number | null | undefined;
  if (typeof flags.budget === 'string') {
    if (flags.budget === 'none') budget = null;
    else {
      budget = Number(flags.budget);
      if (!Number.isInteger(budget) || budget <= 0) throw new UsageError(`--budget "${flags.budget}" is not a whole number of tokens > 0 (or none)`);
    }
  }
  const e = updateSession(ctx.store, id, { ...(typeof flags.title === 'string' ? { title: flags.title } : {}), ...(budget !== undefined ? { budget } : {}) });
  ctx.out.result({ id: e.id, type: e.type }, e.id);
}
