import { sendMessage } from '../../core/session-ops.js';
import { createSession } from '../../core/create-session.js';
import type { CliContext, CommandInput } from '../command.js';
import { runDaemon } from './daemon.js';

export const FIRST_MESSAGE = 'Hello! Please look around your workspace, leave a note, and check on it later.';

export async function run(ctx: CliContext, { flags }: CommandInput): Promise<number | void> {
  let id = ctx.store.listIds()[0];
  if (!id) {
    const s = createSession(ctx.store, { agent: 'demo', title: 'first demo' });
    sendMessage(ctx.store, s.id, FIRST_MESSAGE);
    id = s.id;
    ctx.out.note(`created a demo session and sent it a first message: ${id}`);
  }
  ctx.out.note(
    [
      `In another terminal, from ${ctx.home.root}:`,
      `  npx openboa events ${id} --follow       # watch the log`,
      `  echo '{"type":"user.message","content":"hi"}' >> sessions/${id}/events.jsonl`,
      `  npx openboa send ${id} "hello again"     # the same, through the CLI`,
      'The demo run schedules a revisit 10 seconds later; watch it fire below. Ctrl-C stops the daemon.',
      '',
    ].join('\n'),
  );
  return runDaemon(ctx, flags);
}
