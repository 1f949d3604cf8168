import { answerCustomTool } from '../../core/session-ops.js';
import type { CommandSpec } from '../command.js';
import { readStdin } from '../stdin.js';

export const toolResult: CommandSpec = {
  path: ['tool-result'],
  rest: true,
  summary: 'answer a custom tool use with its result',
  args: [
    { name: 'id', required: true, description: 'the session id' },
    { name: 'custom_tool_use_event_id', required: true, description: 'the agent.custom_tool_use event id (openboa status lists them)' },
    { name: 'text', required: true, description: 'the result for the model; "-" reads it from stdin' },
  ],
  options: {
    error: { type: 'boolean', description: 'the tool failed; the text says how' },
  },
  async run(ctx, { args, rest, flags }) {
    ctx.store.require(args.id as string); // before waiting on stdin
    const text = args.text === '-' ? await readStdin(ctx.stdin) : [args.text as string, ...rest].join(' ');
    const e = answerCustomTool(ctx.store, args.id as string, args.custom_tool_use_event_id as string, text, flags.error === true);
    ctx.out.result({ id: e.id, type: e.type }, e.id);
  },
};
