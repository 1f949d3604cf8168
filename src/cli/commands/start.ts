import { defineOutcome } from '../../core/ops/session-ops.js';
import { createSession } from '../../core/ops/create-session.js';
import type { CliContext, CommandInput } from '../command.js';
import { ensureHome, runDaemon } from './daemon.js';
import { invocation } from '../invocation.js';

/**
 * The demo's first minute is an outcome, which starts work by itself: the
 * scripted agent writes its note, the check fails once (no status line),
 * the agent fixes the file, the check passes.
 */
export const FIRST_OUTCOME = {
  description: 'Look around your workspace, leave a note in /workspace/notes.md with a line "Status: ok", and check on it later.',
  check: `grep -qx 'Status: ok' notes.md || { echo 'notes.md has no line "Status: ok"'; exit 1; }`,
  maxIterations: 3,
};

export async function run(ctx: CliContext, { flags }: CommandInput): Promise<number | void> {
  await ensureHome(ctx, flags);
  const existing = ctx.store.listIds();
  let id = existing[0];
  const fresh = !id;
  if (!id) {
    const s = createSession(ctx.store, { agent: 'demo', title: 'first demo' });
    defineOutcome(ctx.store, s.id, FIRST_OUTCOME);
    id = s.id;
    ctx.out.note(`created a demo session and gave it an outcome with a check: ${id}`);
  }
  // The command that works from the home, as people will type it there.
  const cli = invocation(ctx.home.root, process.env);
  ctx.out.note(
    [
      `In another terminal, from ${ctx.home.root}:`,
      `  ${cli} events ${id} --follow       # watch the log`,
      `  echo '{"type":"user.message","content":"hi"}' >> sessions/${id}/events.jsonl`,
      `  ${cli} send ${id} "hello again"     # the same, through the CLI`,
      `  ${cli} status ${id}                 # the outcome and its evaluations`,
      // Only a demo session made now has work to show: on a later start, say what is there instead.
      ...(fresh
        ? ['The demo run is graded by its check: it fails once, the agent fixes its note, the check passes.', 'It also schedules a revisit 10 seconds later; watch it fire below. Ctrl-C stops the daemon.']
        : [`This home has ${existing.length} session(s) (openboa sessions lists them): the daemon runs whichever has work or a revisit due, and prints nothing until one does. Ctrl-C stops it.`]),
      '',
    ].join('\n'),
  );
  return runDaemon(ctx, flags);
}
