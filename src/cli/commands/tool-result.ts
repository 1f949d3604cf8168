import { answerCustomTool } from '../../core/session-ops.js';
import type { CommandSpec } from '../command.js';

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(Buffer.isBuffer(c) ? c : Buffer.from(String(c)));
  return Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
}

export const toolResult: CommandSpec = {
  path: ['tool-result'],
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
    const text = args.text === '-' ? await readAll(ctx.stdin) : [args.text as string, ...rest].join(' ');
    const e = answerCustomTool(ctx.store, args.id as string, args.custom_tool_use_event_id as string, text, flags.error === true);
    ctx.out.result({ id: e.id, type: e.type }, e.id);
  },
};
