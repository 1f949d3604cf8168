import { sendMessage } from '../../core/session-ops.js';
import { UsageError, type CliContext, type CommandInput } from '../command.js';
import { readStdin } from '../stdin.js';

/**
 * Why a message just appended will not be taken in soon, in words (empty
 * when a daemon runs and the session can act on it). The message is in the
 * log either way; these only say what it waits for.
 */
async function whyItWaits(ctx: CliContext, id: string): Promise<string[]> {
  const s = ctx.store.snapshot(id);
  if (s.status === 'terminated') return [`session ${id} is terminated: the message is in its log, but no run will take it in`];
  const notes: string[] = [];
  const asks = s.counts.requires_action;
  if (asks > 0) notes.push(`session ${id} is waiting on ${asks} answer${asks === 1 ? '' : 's'} (openboa status ${id} lists them); the message is taken in once they are answered`);
  // Loaded here, not at startup: only send needs the daemon's lock reader.
  const { runningDaemon } = await import('../../daemon/home-lock.js');
  if (!(await runningDaemon(ctx.home))) notes.push(`no daemon is running on this home (${ctx.home.root}): the message waits until one starts (openboa daemon), or run the session once now (openboa wake ${id})`);
  return notes;
}

export async function run(ctx: CliContext, { args, rest, flags }: CommandInput): Promise<number | void> {
  const id = args.id as string;
  ctx.store.require(id);
  if (flags.lines === true) {
    if (args.text !== undefined) throw new UsageError('--lines reads messages from stdin; give no <text>');
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
