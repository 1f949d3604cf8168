import * as z from 'zod';
import { sendMessage } from '../../core/ops/session-ops.js';
import { SessionStore } from '../../core/store/session-store.js';
import { UsageError, type CliContext, type CommandInput } from '../command.js';
import { textArgument } from '../stdin.js';
import { whyItWaits } from '../why-it-waits.js';
import { EXIT } from '../exit.js';

export async function run(given: CliContext, { args, rest, flags }: CommandInput): Promise<number | void> {
  // --shared: whatever the home looks like from here, another host may be appending (store/shared-home.ts).
  const ctx = flags.shared === true ? { ...given, store: new SessionStore(given.home, given.deps, { shared: true }) } : given;
  // A one-shot send parses a few records once: zod's compiled fast path costs more to build than it saves
  // (about 15 % of the process's CPU). `--wait` runs a session in this process, where it pays.
  if (flags.wait !== true) z.config({ jitless: true });
  const id = args.id as string;
  ctx.store.require(id);
  if (flags.lines === true) {
    if (flags.wait === true) throw new UsageError('--wait waits for the answer to one message; it does not go with --lines (openboa chat is a conversation)');
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
  const text = await textArgument(args.text, rest, ctx.stdin);
  if (flags.wait === true) return sendAndWait(ctx, id, text);
  const e = sendMessage(ctx.store, id, text);
  const notes = await whyItWaits(ctx, id);
  ctx.out.result({ id: e.id, type: e.type, created_at: e.created_at, notes }, e.id);
  for (const note of notes) ctx.out.warn(note);
}

/**
 * `send --wait`: the message, then the agent's turn as it happens (its
 * replies on stdout, its tool calls on stderr), and what it waits for if it
 * pauses. Exit 0 when the turn ended (idle, or waiting on a person), 1 when
 * it did not (a failed run backing off with no daemon, a paused session).
 */
async function sendAndWait(ctx: CliContext, id: string, text: string): Promise<number> {
  const [{ converse }, { redactFor }] = await Promise.all([import('../converse.js'), import('../session-redactor.js')]);
  // What the agent's turn prints passes through the session's secrets, as events and status do.
  redactFor(ctx, id);
  const { waitingLines } = await import('../waiting-lines.js');
  const before = await whyItWaits(ctx, id, 'the message', { daemonNeeded: false });
  for (const note of before) ctx.out.warn(note);
  const ex = await converse(ctx, id, () => sendMessage(ctx.store, id, text));
  if (ctx.json) ctx.out.data({ end: ex.end.kind, stop_reason: 'event' in ex.end && ex.end.event.type === 'session.status_idle' ? ex.end.event.stop_reason : null, waiting: ex.waiting, note: ex.note });
  else for (const l of waitingLines(id, ex.waiting)) ctx.out.note(l);
  if (ex.note) ctx.out.warn(ex.note);
  if (ex.end.kind === 'aborted') ctx.out.warn(`stopped waiting; session ${id} goes on (openboa events ${id} --follow)`);
  return ex.end.kind === 'idle' || ex.end.kind === 'terminated' ? EXIT.ok : EXIT.failure;
}
