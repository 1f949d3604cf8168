import { updateSession } from '../../core/session-ops.js';
import { UsageError, type CommandSpec } from '../command.js';

export const sessionUpdate: CommandSpec = {
  path: ['session', 'update'],
  summary: "change a session's own definition (from its next run): title, token budget",
  args: [{ name: 'id', required: true, description: 'the session id' }],
  options: {
    title: { type: 'string', value: 'T', description: 'a new title' },
    budget: { type: 'string', value: 'N|none', description: 'session_token_budget for this session: tokens, or none for no cap' },
  },
  async run(ctx, { args, flags }) {
    const id = args.id as string;
    ctx.store.require(id);
    let budget: number | null | undefined;
    if (typeof flags.budget === 'string') {
      if (flags.budget === 'none') budget = null;
      else {
        budget = Number(flags.budget);
        if (!Number.isInteger(budget) || budget <= 0) throw new UsageError(`--budget "${flags.budget}" is not a whole number of tokens > 0 (or none)`);
      }
    }
    const e = updateSession(ctx.store, id, { ...(typeof flags.title === 'string' ? { title: flags.title } : {}), ...(budget !== undefined ? { budget } : {}) });
    ctx.out.result({ id: e.id, type: e.type }, e.id);
  },
};
