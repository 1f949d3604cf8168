import { cancelRevisit, scheduleRevisit } from '../../core/ops/session-ops.js';
import { describeRecurrence } from '../../core/schedule/recurrence.js';
import { OpenboaError } from '../../core/foundation/errors.js';
import { UsageError, type CliContext, type CommandInput } from '../command.js';
import { durationFlag } from '../flags.js';

export async function run(ctx: CliContext, { args, flags }: CommandInput): Promise<number | void> {
  const id = args.id as string;
  if (typeof flags.cancel === 'string') {
    const other = ['in', 'at', 'every', 'cron', 'tz', 'reason'].find((f) => flags[f] !== undefined);
    if (other) throw new UsageError(`--cancel takes no --${other}: it cancels a revisit, it schedules none`);
    return cancel(ctx, id, flags.cancel);
  }
  const at = typeof flags.at === 'string' ? flags.at : undefined;
  const cron = typeof flags.cron === 'string' ? flags.cron : undefined;
  const tz = typeof flags.tz === 'string' ? flags.tz : undefined;
  const everyMs = durationFlag(flags, 'every');
  if (everyMs !== undefined && cron !== undefined) throw new UsageError('give either --every DURATION or --cron EXPR, not both');
  if (tz !== undefined && cron === undefined) throw new UsageError('--tz is the time zone of --cron: give --cron too');
  const recurring = everyMs !== undefined || cron !== undefined;
  if (flags.in !== undefined && at !== undefined) throw new UsageError('give at most one of --in DURATION or --at ISO');
  if (!recurring && flags.in === undefined && at === undefined) throw new UsageError('give exactly one of --in DURATION or --at ISO (or --every / --cron to repeat)');
  const inMs = durationFlag(flags, 'in');
  ctx.store.require(id);
  const reason = typeof flags.reason === 'string' ? flags.reason : 'revisit scheduled from the CLI';
  const when = {
    ...(inMs !== undefined ? { inMs } : {}),
    ...(at !== undefined ? { at } : {}),
    // Whole seconds: the line's unit. A cron expression is read in the zone given, else this machine's, written into the line.
    ...(everyMs !== undefined ? { every: Math.round(everyMs / 1000) } : {}),
    ...(cron !== undefined ? { cron, timezone: tz ?? Intl.DateTimeFormat().resolvedOptions().timeZone } : {}),
  };
  let rec;
  try {
    rec = await scheduleRevisit(ctx.store, ctx.deps.clock, id, when, reason);
  } catch (e) {
    // The core names the line's field; the flag for it is --tz.
    if (OpenboaError.is(e) && e.data.field === 'timezone') throw new UsageError(`--tz ${e.message}`);
    throw e;
  }
  ctx.out.result(rec, `${rec.id} due ${rec.due_at}${rec.recurrence ? `, then ${describeRecurrence(rec.recurrence)}` : ''}`);
}

/** --cancel WAKE_ID: a pending revisit is cancelled; a recurring one stops for good. */
async function cancel(ctx: CliContext, id: string, wakeId: string): Promise<void> {
  const w = await cancelRevisit(ctx.store, ctx.deps.clock, id, wakeId);
  ctx.out.result({ wake_id: w.id, cancelled: true }, `cancelled ${w.id}${w.recurrence ? ' and every firing to come' : ''}`);
}
