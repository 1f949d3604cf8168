import { scheduleRevisit } from '../../core/session-ops.js';
import { UsageError, type CommandSpec } from '../command.js';
import { durationFlag } from '../flags.js';

export const schedule: CommandSpec = {
  path: ['schedule'],
  summary: 'schedule a revisit of a session (append a wake.scheduled)',
  args: [{ name: 'id', required: true, description: 'the session id' }],
  options: {
    in: { type: 'string', value: 'DURATION', description: 'from now: 90s, 10m, 1h30m, 2d (a bare number is seconds)' },
    at: { type: 'string', value: 'ISO', description: 'at a time, e.g. 2026-11-21T10:05:00Z' },
    reason: { type: 'string', value: 'R', description: 'what the revisit is for (shown to the agent)' },
  },
  async run(ctx, { args, flags }) {
    const id = args.id as string;
    const at = typeof flags.at === 'string' ? flags.at : undefined;
    if ((flags.in === undefined) === (at === undefined)) throw new UsageError('give exactly one of --in DURATION or --at ISO');
    const inMs = durationFlag(flags, 'in');
    ctx.store.require(id);
    const reason = typeof flags.reason === 'string' ? flags.reason : 'revisit scheduled from the CLI';
    const rec = scheduleRevisit(ctx.store, ctx.deps.clock, id, { ...(inMs !== undefined ? { inMs } : {}), ...(at !== undefined ? { at } : {}) }, reason);
    ctx.out.result(rec, `${rec.id} due ${rec.due_at}`);
  },
};
