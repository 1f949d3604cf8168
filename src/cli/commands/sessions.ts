import { openActions } from '../../core/store/answer-problem.js';
import { nextWakeAt } from '../../core/store/wake-queue-fold.js';
import { stopLabel } from '../stop-label.js';
import type { CliContext, CommandInput } from '../command.js';
import { choiceFlag, wholeNumberFlag } from '../flags.js';
import { SESSION_STATUSES } from '../session-statuses.js';

export async function run(ctx: CliContext, { flags }: CommandInput): Promise<number | void> {
  const status = choiceFlag(flags, 'status', SESSION_STATUSES);
  const limit = wholeNumberFlag(flags, 'limit', { min: 1, example: 20 }) ?? Infinity;
  const rows = [];
  // Session ids are UUIDv7: sorted descending, the newest come first.
  for (const id of ctx.store.listIds().reverse()) {
    if (rows.length >= limit) break;
    let row;
    try {
      const s = ctx.store.snapshot(id);
      if (s.archived_at !== null && flags.archived !== true) continue;
      row = {
        id,
        agent_id: s.agent_id,
        title: s.title,
        status: s.status,
        paused: s.paused ? { since: s.paused.since, reason: s.paused.reason } : null,
        archived_at: s.archived_at,
        stop_reason: s.stop_reason?.type ?? null,
        stop: stopLabel(s),
        retry_at: s.retry_at,
        pending_events: s.pending_events.length,
        requires_action: openActions(s).length,
        next_wake_at: nextWakeAt(s),
        updated_at: s.updated_at,
      };
    } catch (e) {
      row = { id, error: (e as Error).message };
    }
    // An unreadable session has no status: it is listed only when no status is asked for.
    if (status !== undefined && (!('status' in row) || (status === 'paused' ? row.paused === null : row.status !== status))) continue;
    rows.push(row);
  }
  if (ctx.json) {
    for (const r of rows) ctx.out.data(r);
    return;
  }
  if (rows.length === 0) {
    ctx.out.line(status === undefined ? `no sessions in ${ctx.home.sessionsDir}` : `no ${status} sessions in ${ctx.home.sessionsDir}`);
    return;
  }
  const { table } = await import('../width.js');
  ctx.out.line(
    table(
      ['ID', 'AGENT', 'STATUS', 'STOP', 'PENDING', 'NEXT WAKE', 'TITLE'],
      rows.map((r) =>
        'error' in r
          ? [r.id, '?', ctx.out.status('unreadable'), '', '', '', r.error ?? '']
          : [r.id, r.agent_id, `${ctx.out.status(r.status)}${r.paused ? ' (paused)' : ''}${r.archived_at ? ' (archived)' : ''}`, r.stop, `${r.pending_events}${r.requires_action ? ` (+${r.requires_action} ask)` : ''}`, r.status === 'rescheduling' && r.retry_at ? `${r.retry_at} (retry)` : (r.next_wake_at ?? ''), (r.title ?? '').replace(/\s+/g, ' ')],
      ),
    ),
  );
}
