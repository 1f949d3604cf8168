import { nextWakeAt, openActions } from '../../core/store/fold.js';
import type { CommandSpec } from '../command.js';
import { table } from '../output.js';

export const sessions: CommandSpec = {
  path: ['sessions'],
  summary: 'list sessions with status, stop reason and next due wake',
  async run(ctx) {
    const rows = ctx.store.listIds().map((id) => {
      try {
        const s = ctx.store.snapshot(id);
        return {
          id,
          agent_id: s.agent_id,
          title: s.title,
          status: s.status,
          stop_reason: s.stop_reason?.type ?? null,
          pending_events: s.pending_events.length,
          requires_action: openActions(s).length,
          next_wake_at: nextWakeAt(s),
          updated_at: s.updated_at,
        };
      } catch (e) {
        return { id, error: (e as Error).message };
      }
    });
    if (ctx.json) {
      for (const r of rows) ctx.out.data(r);
      return;
    }
    if (rows.length === 0) {
      ctx.out.line(`no sessions in ${ctx.home.sessionsDir}`);
      return;
    }
    ctx.out.line(
      table(
        ['ID', 'AGENT', 'STATUS', 'STOP', 'PENDING', 'NEXT WAKE', 'TITLE'],
        rows.map((r) =>
          'error' in r
            ? [r.id, '?', 'unreadable', '', '', '', r.error ?? '']
            : [r.id, r.agent_id, r.status, r.stop_reason ?? '', `${r.pending_events}${r.requires_action ? ` (+${r.requires_action} ask)` : ''}`, r.next_wake_at ?? '', r.title ?? ''],
        ),
      ),
    );
  },
};
