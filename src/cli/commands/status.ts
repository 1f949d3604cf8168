import { sessionStatus } from '../../core/session-ops.js';
import type { CliContext, CommandInput } from '../command.js';
import { cacheReadShare } from '../../core/schema/index.js';
import { TAIL_GRACE_MS } from '../../core/store/jsonl.js';
import { redactFor } from '../session-redactor.js';

export async function run(ctx: CliContext, { args }: CommandInput): Promise<number | void> {
  redactFor(ctx, args.id as string);
  const st = await sessionStatus(ctx.store, ctx.deps.clock, args.id as string);
  const s = st.snapshot;
  const { journals: _journals, reported: _reported, ...snapshot } = s;
  ctx.out.result({ ...snapshot, cache_read_share: cacheReadShare(s.usage), lease: st.lease, requires_action: st.requires_action, due_wakes: st.due_wakes, next_wake_at: st.next_wake_at }, () => {
    const lines = [
      `session    ${s.id}${s.title ? `  "${s.title}"` : ''}`,
      `agent      ${s.agent_id}   environment ${s.environment_id}`,
      `status     ${s.status}${s.stop_reason ? ` (${s.stop_reason.type})` : ''}${s.retry_at ? `, retry at ${s.retry_at}` : ''}`,
      `lease      ${st.lease.held ? `held${st.lease.owner ? ` by pid ${st.lease.owner.pid} on ${st.lease.owner.host} (${st.lease.owner.purpose}${st.lease.owner.wake_id ? ` ${st.lease.owner.wake_id}` : ''})` : ''}` : 'free'}`,
      `last run   ${s.last_wake_id ?? '-'}`,
      ...(s.last_error ? [`last error ${s.last_error.message}${s.last_error.code ? ` (${s.last_error.code}, ${s.last_error.at})` : ` (${s.last_error.at})`}`] : []),
      `usage      ${s.usage.input_tokens} in, ${s.usage.output_tokens} out, ${s.usage.model_requests} model requests; ${Math.round(cacheReadShare(s.usage) * 100)}% of input read from the prompt cache (${s.usage.cache_read_input_tokens} tokens)`,
      `pending    ${st.pending_events.length} event(s)${st.pending_events.length ? `: ${st.pending_events.map((p) => `${p.id} (${p.type}, line ${p.line})`).join(', ')}` : ''}`,
    ];
    if (st.requires_action.length) {
      lines.push(`waiting on ${st.requires_action.length} answer(s):`);
      for (const a of st.requires_action) {
        lines.push(
          a.kind === 'tool'
            ? `  ${a.id}  ${a.name}: openboa confirm ${s.id} ${a.id} --allow|--deny [--message M]`
            : `  ${a.id}  ${a.name}: openboa tool-result ${s.id} ${a.id} <text> [--error]`,
        );
      }
    }
    lines.push(`wakes      ${s.pending_wakes.length} pending (${st.due_wakes} due), ${s.wakes_consumed} consumed, ${s.wakes_cancelled} cancelled; next ${st.next_wake_at ?? '-'}`);
    for (const [file, n] of [['events.jsonl', s.held_back.events], ['wake-queue.jsonl', s.held_back.wake_queue]] as const) {
      if (n) lines.push(`unfinished ${n} byte(s) at the end of ${file} have no final newline yet; the daemon reads them once they do (or seals them after ${TAIL_GRACE_MS / 1000} s)`);
    }
    if (st.unreported_errors.length) {
      lines.push(`bad lines  ${st.unreported_errors.length} not yet reported in the log:`);
      for (const r of st.unreported_errors) lines.push(`  ${r.message}`);
    }
    return lines.join('\n');
  });
}
