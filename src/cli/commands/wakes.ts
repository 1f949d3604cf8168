import { viewWakes } from '../../core/wake-view.js';
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
          `${w.due_at}${w.provisional ? ' (provisional)' : ''}`,
          w.source,
          w.reason,
          w.state === 'consumed' ? (w.wake_run_id ? `by ${w.wake_run_id} at ${w.settled_at}` : 'taken by a run (its record was not written: the run died first)') : w.state === 'cancelled' ? `${w.cancel_reason} at ${w.settled_at}` : w.retry_of ? `retry of ${w.retry_of}` : '',
        ]),
      ),
    );
  for (const i of invalid) ctx.out.line(`bad line: ${i.message}`);
}
