import { viewWakes, type WakeView } from '../../core/views/wake-view.js';
import { describeRecurrence } from '../../core/schedule/recurrence.js';
import type { CliContext, CommandInput } from '../command.js';

export async function run(ctx: CliContext, { args }: CommandInput): Promise<number | void> {
  const id = args.id as string;
  const snap = ctx.store.snapshot(id);
  const { wakes: list, invalid } = viewWakes(ctx.store.readWakes(id), ctx.deps.clock.now(), snap);
  if (ctx.json) {
    // One JSON array, [] when there are none: an empty output would read like a failure.
    ctx.out.data([...list, ...invalid.map((i) => ({ line: i.line, invalid: { code: 'invalid_wake', message: i.message } }))]);
    return;
  }
  const { table } = await import('../width.js');
  if (list.length === 0) ctx.out.line('no wakes');
  else
    ctx.out.line(
      table(
        ['ID', 'STATE', 'DUE', 'SOURCE', 'REASON', 'DETAIL'],
        list.map((w) => [
          w.id,
          w.state,
          `${w.due_at}${w.provisional ? ' (provisional)' : w.recurrence && (w.state === 'pending' || w.state === 'due') ? ' (next)' : ''}`,
          w.source,
          w.reason,
          w.recurrence ? recurringDetail(w) : w.state === 'consumed' ? (w.wake_run_id ? `by ${w.wake_run_id} at ${w.settled_at}` : TAKEN) : w.state === 'cancelled' ? `${w.cancel_reason} at ${w.settled_at}` : w.retry_of ? `retry of ${w.retry_of}` : '',
        ]),
      ),
    );
  for (const i of invalid) ctx.out.line(`bad line: ${i.message}`);
}

const TAKEN = 'taken by a run (its record was not written: the run died first)';

/** A recurring revisit: its rule, then how often it fired and the last time; cancelled ones say why first. */
function recurringDetail(w: WakeView): string {
  const parts = [describeRecurrence(w.recurrence as NonNullable<WakeView['recurrence']>)];
  if (w.state === 'cancelled') parts.unshift(`${w.cancel_reason} at ${w.settled_at}`);
  const last = w.last_firing;
  if (last) parts.push(`fired ${w.firings} time(s), last due ${last.due_at} ${last.as === 'cancelled' ? `skipped at ${last.at}` : last.wake_run_id ? `by ${last.wake_run_id}` : TAKEN}`);
  else parts.push('not fired yet');
  return parts.join('; ');
}
