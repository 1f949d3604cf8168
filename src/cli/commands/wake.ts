import { wake } from '../../core/run/wake.js';
import { busy } from '../../core/foundation/errors.js';
import type { CliContext, CommandInput } from '../command.js';
import { EXIT } from '../exit.js';
import { redactFor } from '../session-redactor.js';

export async function run(ctx: CliContext, { args, flags }: CommandInput): Promise<number | void> {
  const id = args.id as string;
  if (flags.force !== true) {
    const { runningDaemon } = await import('../../core/foundation/daemon-presence.js');
    const d = await runningDaemon(ctx.home);
    if (d) {
      throw busy(
        `a daemon (pid ${d.pid}${d.host ? ` on ${d.host}` : ''}) runs on this home and runs ${id} itself, with its own environment (API keys, secrets); a run here would use this shell's instead. Let the daemon run it (openboa status ${id} says when), or pass --force to run it here anyway`,
      );
    }
  }
  redactFor(ctx, id);
  const r = await wake({ home: ctx.home, store: ctx.store, deps: ctx.deps }, id, { trigger: 'manual', signal: ctx.signal });
  ctx.out.result(r, () => {
    if (r.outcome === 'skipped') return `skipped: ${r.skip_reason}${r.errors.length ? `\nreported ${r.errors.length} bad line(s):\n${r.errors.map((e) => `  ${e}`).join('\n')}` : ''}`;
    const stop = r.stop_reason?.type === 'requires_action' ? `requires_action (${r.stop_reason.event_ids.join(', ')})` : (r.stop_reason?.type ?? r.status);
    const lines = [
      `${r.wake_id} ${r.trigger}: ${r.status}${r.status === 'idle' ? `, ${stop}` : ''}${r.retry_at ? `, retry at ${r.retry_at}` : ''}`,
      `  took in ${r.processed_event_ids.length} event(s), ${r.wakes_consumed.length} wake(s); ${r.usage.model_requests} model request(s), ${r.tool_calls} tool call(s), ${r.usage.input_tokens} in / ${r.usage.output_tokens} out tokens, ${r.duration_ms} ms`,
    ];
    for (const e of r.outcome_evaluations) lines.push(`  outcome ${e.outcome_id} evaluation ${e.iteration + 1}: ${e.result}`);
    if (r.wakes_scheduled.length) lines.push(`  scheduled: ${r.wakes_scheduled.join(', ')}`);
    for (const e of r.errors) lines.push(`  error: ${e}`);
    return lines.join('\n');
  });
  if (!r.failure) return EXIT.ok;
  // The cause, once more, where errors go: the one line a script or a person looks at.
  ctx.out.error(r.failure.code, r.failure.message);
  return r.failure.code === 'invalid_definition' ? EXIT.usage : EXIT.failure;
}
