import readline from 'node:readline/promises';
import { deleteSession } from '../../core/ops/session-lifecycle.js';
import { UsageError, type CliContext, type CommandInput } from '../command.js';
import { safeText } from '../safe-text.js';

/** Asks on the terminal whether to go on; false unless the answer is yes. The question is made safe (it holds a title an agent may have chosen). */
async function confirmed(ctx: CliContext, question: string): Promise<boolean> {
  const rl = readline.createInterface({ input: ctx.stdin, output: process.stderr });
  try {
    return /^\s*y(es)?\s*$/i.test(await rl.question(`${safeText(ctx.out.redactor.text(question))} [y/N] `));
  } finally {
    rl.close();
  }
}

export async function run(ctx: CliContext, { args, flags }: CommandInput): Promise<number | void> {
  const id = args.id as string;
  const s = ctx.store.snapshot(id);
  if (flags.yes !== true) {
    if (!(ctx.stdin as { isTTY?: boolean }).isTTY) throw new UsageError(`delete removes session ${id} and its workspace for good: pass --yes to do it without a question`);
    const what = `${s.title ? `"${s.title}", ` : ''}agent ${s.agent_id}, ${s.status}`;
    if (!(await confirmed(ctx, `Delete session ${id} (${what}) and its workspace for good?`))) {
      ctx.out.warn('nothing deleted');
      return;
    }
  }
  const { children, left } = await deleteSession(ctx.store, id, new Date(ctx.deps.clock.now()).toISOString());
  const notes = [
    ...(children.length ? [`its ${children.length} child session(s) are kept: ${children.join(', ')}`] : []),
    ...left.map((l) => `a deleted session's folder is still on the disk, hidden (the next delete tries again): ${l}`),
  ];
  ctx.out.result({ id, deleted: true, notes }, `deleted ${id}`);
  for (const n of notes) ctx.out.warn(n);
}
