import { confirmToolUse } from '../../core/ops/session-ops.js';
import { UsageError, type CliContext, type CommandInput } from '../command.js';

export async function run(ctx: CliContext, { args, flags }: CommandInput): Promise<number | void> {
  if ((flags.allow === true) === (flags.deny === true)) throw new UsageError('give exactly one of --allow or --deny');
  const e = confirmToolUse(ctx.store, args.id as string, args.tool_use_event_id as string, {
    allow: flags.allow === true,
    message: typeof flags.message === 'string' ? flags.message : undefined,
  });
  ctx.out.result({ id: e.id, type: e.type }, e.id);
}
