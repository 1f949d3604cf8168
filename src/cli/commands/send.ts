import { createInterface } from 'node:readline';
import { sendMessage } from '../../core/session-ops.js';
import { UsageError, type CommandSpec } from '../command.js';
import { readStdin } from '../stdin.js';

export const send: CommandSpec = {
  path: ['send'],
  rest: true,
  summary: 'append a user.message to a session',
  args: [
    { name: 'id', required: true, description: 'the session id' },
    { name: 'text', required: false, description: 'the message; "-" reads it from stdin' },
  ],
  options: {
    lines: { type: 'boolean', description: 'read stdin and send each non-empty line as its own message' },
  },
  async run(ctx, { args, rest, flags }) {
    const id = args.id as string;
    ctx.store.require(id);
    if (flags.lines === true) {
      if (args.text !== undefined) throw new UsageError('--lines reads messages from stdin; give no <text>');
      const rl = createInterface({ input: ctx.stdin, crlfDelay: Infinity });
      let n = 0;
      for await (const line of rl) {
        if (line.trim() === '') continue;
        const e = sendMessage(ctx.store, id, line);
        ctx.out.result({ id: e.id }, e.id);
        n += 1;
      }
      if (n === 0) throw new UsageError('stdin held no lines to send');
      return;
    }
    if (args.text === undefined) throw new UsageError(`missing argument <text> (usage: openboa send <id> <text>)`);
    const text = args.text === '-' ? await readStdin(ctx.stdin) : [args.text, ...rest].join(' ');
    const e = sendMessage(ctx.store, id, text);
    ctx.out.result({ id: e.id, type: e.type, created_at: e.created_at }, e.id);
  },
};
