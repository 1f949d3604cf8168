import { pauseSession } from '../../core/ops/pause-ops.js';
import type { CliContext, CommandInput } from '../command.js';

export async function run(ctx: CliContext, { args, flags }: CommandInput): Promise<number | void> {
  const id = args.id as string;
  ctx.store.require(id);
  const { event, notes } = pauseSession(ctx.store, id, typeof flags.reason === 'string' ? flags.reason : undefined);
  ctx.out.result({ id: event.id, type: event.type, created_at: event.created_at, notes }, event.id);
  for (const note of notes) ctx.out.warn(note);
}
