import { interruptSession } from '../../core/ops/session-ops.js';
import type { CliContext, CommandInput } from '../command.js';

export async function run(ctx: CliContext, { args, flags }: CommandInput): Promise<number | void> {
  const id = args.id as string;
  ctx.store.require(id);
  const e = interruptSession(ctx.store, id, typeof flags.reason === 'string' ? flags.reason : undefined);
  ctx.out.result({ id: e.id, type: e.type }, e.id);
}
