import readline from 'node:readline/promises';
import { answerCustomTool, confirmToolUse, sendMessage } from '../../core/ops/session-ops.js';
import { resolveEscalation } from '../../core/ops/resolve-escalation.js';
import type { SessionEvent } from '../../core/schema/index.js';
import type { CliContext, CommandInput } from '../command.js';
import { converse, type Exchange, type Waiting } from '../converse.js';
import { redactFor } from '../session-redactor.js';
import { toolSummary } from '../../daemon/operator-log.js';

/** What a person typed, as the answer to one waiting tool use: the event that answers it. */
type Answer = (ctx: CliContext, id: string) => SessionEvent;

/**
 * Asks the person at the prompt how to answer `w`. A confirmation: y (allow),
 * n or empty (deny), anything else is a deny with that message. A custom
 * tool: its result text. An escalation: an option's number, or words that
 * become the person's answer.
 */
async function ask(question: (prompt: string) => Promise<string>, ctx: CliContext, w: Waiting): Promise<Answer> {
  const what = w.input ? toolSummary(w.name, w.input) : w.name;
  if (w.escalation) {
    const esc = w.escalation;
    ctx.out.note(`the agent asks: ${esc.situation}`);
    esc.options.forEach((o, i) => ctx.out.note(`  ${i + 1}. ${o}${esc.recommendation === i + 1 ? '  (recommended)' : ''}`));
    const a = (await question(`pick 1-${esc.options.length}, or say what to do: `)).trim();
    const n = Number(a);
    if (Number.isInteger(n) && n >= 1 && n <= esc.options.length) return (c, id) => resolveEscalation(c.store, id, w.id, { pick: n });
    return (c, id) => resolveEscalation(c.store, id, w.id, { message: a || 'No answer; stop here.' });
  }
  if (w.kind === 'custom') {
    const text = await question(`result of ${what}: `);
    return (c, id) => answerCustomTool(c.store, id, w.id, text, false);
  }
  const a = (await question(`allow ${what}? [y/N, or a message to deny with] `)).trim();
  if (/^y(es)?$/i.test(a)) return (c, id) => confirmToolUse(c.store, id, w.id, { allow: true });
  return (c, id) => confirmToolUse(c.store, id, w.id, { allow: false, ...(a && !/^no?$/i.test(a) ? { message: a } : {}) });
}

export async function run(ctx: CliContext, { args }: CommandInput): Promise<number | void> {
  const id = args.id as string;
  ctx.store.require(id);
  redactFor(ctx, id);
  const tty = (ctx.stdin as { isTTY?: boolean }).isTTY === true;
  const rl = readline.createInterface({ input: ctx.stdin, output: process.stderr, terminal: tty });
  const lines = rl[Symbol.asyncIterator]();
  const question = async (prompt: string): Promise<string | null> => {
    // The prompt holds the agent's words (a tool's command): made safe and redacted like every line.
    if (tty) ctx.out.prompt(prompt);
    const r = await lines.next();
    return r.done ? null : r.value;
  };
  // Answers come from the same line stream as messages (a pipe gives both, in order); the end of input is an empty answer.
  const answer = async (p: string) => (await question(p)) ?? '';
  ctx.out.note(`chat with session ${id} (Ctrl-D or /quit ends it)`);
  try {
    let ex: Exchange | null = null;
    for (;;) {
      // What the agent waits for is answered first, then the person speaks again.
      if (ex && ex.waiting.length > 0) {
        const answers: Answer[] = [];
        for (const w of ex.waiting) answers.push(await ask(answer, ctx, w));
        const last = answers.pop()!;
        for (const a of answers) a(ctx, id);
        ex = await converse(ctx, id, () => last(ctx, id));
      } else {
        const text = await question('> ');
        if (text === null || text.trim() === '/quit') break;
        if (text.trim() === '') continue;
        ex = await converse(ctx, id, () => sendMessage(ctx.store, id, text));
      }
      if (ex.note) ctx.out.warn(ex.note);
      if (ex.end.kind === 'aborted') break;
    }
  } finally {
    rl.close();
  }
}
