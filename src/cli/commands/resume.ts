import { resumeSession } from '../../core/ops/pause-ops.js';
import type { CliContext, CommandInput } from '../command.js';
import { whyItWaits } from '../why-it-waits.js';

export async function run(ctx: CliContext, { args }: CommandInput): Promise<number | void> {
  const id = args.id as string;
  ctx.store.require(id);
  const { event, notes } = resumeSession(ctx.store, id);
  // What waited is taken in by the next run: say so when none will come soon (no daemon, answers awaited).
  const s = ctx.store.snapshot(id);
  const waiting = s.pending_events.length + s.pending_wakes.length > 0;
  if (waiting) notes.push(...(await whyItWaits(ctx, id, 'what waited')));
  ctx.out.result({ id: event.id, type: event.type, created_at: event.created_at, notes }, event.id);
  for (const note of notes) ctx.out.warn(note);
}
