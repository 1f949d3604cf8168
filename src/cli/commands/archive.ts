import { archiveSession } from '../../core/ops/session-lifecycle.js';
import type { CliContext, CommandInput } from '../command.js';

export async function run(ctx: CliContext, { args, flags }: CommandInput): Promise<number | void> {
  const id = args.id as string;
  ctx.store.require(id);
  const { event, notes } = archiveSession(ctx.store, id, flags.undo !== true);
  ctx.out.result({ id: event?.id ?? null, type: event?.type ?? null, created_at: event?.created_at ?? null, archived: flags.undo !== true, notes }, event?.id ?? notes.join('\n'));
  if (event) for (const note of notes) ctx.out.warn(note);
}
