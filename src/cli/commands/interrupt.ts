import { interruptSession } from '../../core/session-ops.js';
import type { CommandSpec } from '../command.js';

export const interrupt: CommandSpec = {
  path: ['interrupt'],
  summary: 'stop a session: abort its run, close what it waits on, cancel its revisits',
  args: [{ name: 'id', required: true, description: 'the session id' }],
  options: { reason: { type: 'string', value: 'R', description: 'why (kept in the log)' } },
  async run(ctx, { args, flags }) {
    const id = args.id as string;
    ctx.store.require(id);
    const e = interruptSession(ctx.store, id, typeof flags.reason === 'string' ? flags.reason : undefined);
    ctx.out.result({ id: e.id, type: e.type }, e.id);
  },
};
