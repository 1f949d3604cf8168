import { confirmToolUse } from '../../core/session-ops.js';
import { UsageError, type CommandSpec } from '../command.js';

export const confirm: CommandSpec = {
  path: ['confirm'],
  summary: 'answer a tool use that asks for confirmation (always_ask): allow or deny',
  args: [
    { name: 'id', required: true, description: 'the session id' },
    { name: 'tool_use_event_id', required: true, description: 'the agent.tool_use event id (openboa status lists them)' },
  ],
  options: {
    allow: { type: 'boolean', description: 'run the tool with the input the model gave' },
    deny: { type: 'boolean', description: 'do not run it; the model is told' },
    message: { type: 'string', value: 'M', description: 'with --deny: why, for the model' },
  },
  async run(ctx, { args, flags }) {
    if ((flags.allow === true) === (flags.deny === true)) throw new UsageError('give exactly one of --allow or --deny');
    const e = confirmToolUse(ctx.store, args.id as string, args.tool_use_event_id as string, {
      allow: flags.allow === true,
      message: typeof flags.message === 'string' ? flags.message : undefined,
    });
    ctx.out.result({ id: e.id, type: e.type }, e.id);
  },
};
