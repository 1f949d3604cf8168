/**
 * Why a person's event just appended (a message, an outcome) will not be
 * taken in soon, in words: the session is terminated, paused, waits on answers, or
 * no daemon runs on the home. Empty when a daemon runs and the session can
 * act on it. The event is in the log either way; these only say what it
 * waits for (`send` and `outcome` print them on stderr, or as `notes`).
 * `daemonNeeded: false`: the caller runs the session itself when no daemon
 * does (`send --wait`, `chat`), so that is not a reason to wait.
 */
import type { CliContext } from './command.js';

/** `what` names the event in the notes: "the message", "the outcome". */
export async function whyItWaits(ctx: CliContext, id: string, what = 'the message', o: { daemonNeeded?: boolean } = {}): Promise<string[]> {
  const s = ctx.store.snapshot(id);
  if (s.status === 'terminated') return [`session ${id} is terminated: ${what} is in its log, but no run will take it in`];
  if (s.archived_at !== null) return [`session ${id} is archived (since ${s.archived_at}): ${what} is in its log, but no run takes it in until openboa archive ${id} --undo`];
  const notes: string[] = [];
  if (s.paused) notes.push(`session ${id} is paused (since ${s.paused.since}${s.paused.reason ? `: ${s.paused.reason}` : ''}): ${what} waits until openboa resume ${id}`);
  const asks = s.counts.requires_action;
  if (asks > 0) notes.push(`session ${id} is waiting on ${asks} answer${asks === 1 ? '' : 's'} (openboa status ${id} lists them); ${what} is taken in once they are answered`);
  // Loaded here, not at startup: only the commands that append need it. Any daemon of the home, on any host.
  const { runningDaemon } = await import('../core/foundation/daemon-presence.js');
  if (o.daemonNeeded !== false && !(await runningDaemon(ctx.home))) notes.push(`no daemon is running on this home (${ctx.home.root}): ${what} waits until one starts (openboa daemon), or run the session once now (openboa wake ${id})`);
  return notes;
}
