import { sendMessage } from '../../core/session-ops.js';
import { UsageError, type CliContext, type CommandInput } from '../command.js';
import { readStdin } from '../stdin.js';
import { whyItWaits } from '../why-it-waits.js';

export async function run(ctx: CliContext, { args, rest, flags }: CommandInput): Promise<number | void> {
  const id = args.id as string;
  ctx.store.require(id);
  if (flags.lines === true) {
    if (args.text !== undefined && args.text !== '-') throw new UsageError('--lines reads messages from stdin; give no <text> (or -)');
    // Loaded here: only --lines reads stdin line by line.
    const { createInterface } = await import('node:readline');
    const rl = createInterface({ input: ctx.stdin, crlfDelay: Infinity });
    let n = 0;
    for await (const line of rl) {
      if (line.trim() === '') continue;
      const e = sendMessage(ctx.store, id, line);
      ctx.out.result({ id: e.id }, e.id);
      n += 1;
    }
    if (n === 0) throw new UsageError('stdin held no lines to send');
    for (const note of await whyItWaits(ctx, id)) ctx.out.warn(note);
    return;
  }
  if (args.text === undefined) throw new UsageError(`missing argument <text> (usage: openboa send <id> <text>)`);
  const text = args.text === '-' ? await readStdin(ctx.stdin) : [args.text, ...rest].join(' ');
  const e = sendMessage(ctx.store, id, text);
  const notes = await whyItWaits(ctx, id);
  ctx.out.result({ id: e.id, type: e.type, created_at: e.created_at, notes }, e.id);
  for (const note of notes) ctx.out.warn(note);
}
