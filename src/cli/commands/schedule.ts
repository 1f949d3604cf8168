import { scheduleRevisit } from '../../core/session-ops.js';
import { UsageError, type CliContext, type CommandInput } from '../command.js';
import { durationFlag } from '../flags.js';

export async function run(ctx: CliContext, { args, flags }: CommandInput): Promise<number | void> {
  const id = args.id as string;
  const at = typeof flags.at === 'string' ? flags.at : undefined;
  if ((flags.in === undefined) === (at === undefined)) throw new UsageError('give exactly one of --in DURATION or --at ISO');
  const inMs = durationFlag(flags, 'in');
  ctx.store.require(id);
  const reason = typeof flags.reason === 'string' ? flags.reason : 'revisit scheduled from the CLI';
  const rec = scheduleRevisit(ctx.store, ctx.deps.clock, id, { ...(inMs !== undefined ? { inMs } : {}), ...(at !== undefined ? { at } : {}) }, reason);
  ctx.out.result(rec, `${rec.id} due ${rec.due_at}`);
}
