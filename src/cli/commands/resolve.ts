import { resolveEscalation } from '../../core/ops/resolve-escalation.js';
import { UsageError, type CliContext, type CommandInput } from '../command.js';
import { wholeNumberFlag } from '../flags.js';

export async function run(ctx: CliContext, { args, flags }: CommandInput): Promise<number | void> {
  if ((flags.pick === undefined) === (flags.message === undefined)) throw new UsageError('give exactly one of --pick N or --message M');
  const pick = wholeNumberFlag(flags, 'pick', { min: 1, example: 1 });
  if (flags.message !== undefined && typeof flags.message !== 'string') throw new UsageError('--message needs a value: what the agent should do');
  const e = resolveEscalation(ctx.store, args.id as string, args.event_id as string, pick !== undefined ? { pick } : { message: flags.message as string });
  ctx.out.result({ id: e.id, type: e.type }, e.id);
}
