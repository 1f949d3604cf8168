/**
 * Why a person's event just appended (a message, an outcome) will not be
 * taken in soon, in words: the session is terminated, paused, waits on answers, or
 * no daemon runs on the home. Empty when a daemon runs and the session can
 * act on it. The event is in the log either way; these only say what it
 * waits for (`send` and `outcome` print them on stderr, or as `notes`).
 * `daemonNeeded: false`: the caller runs the session itself when no daemon
 * does (`send --wait`, `chat`), so that is not a reason to wait.
 */
import type { Home } from '../core/foundation/home.js';
import { runningDaemon } from '../core/foundation/daemon-presence.js';
import { waitStateOf, type WaitState } from '../core/store/wait-state.js';
import type { CliContext } from './command.js';

export interface WaitNoteOptions {
  daemonNeeded?: boolean;
}

/** The notes for session `id` of `home` in state `s` (core/store/wait-state.ts). `what` names the event: "the message", "the outcome". */
export async function waitNotes(home: Home, id: string, s: WaitState, what = 'the message', o: WaitNoteOptions = {}): Promise<string[]> {
  if (s.terminated) return [`session ${id} is terminated: ${what} is in its log, but no run will take it in`];
  if (s.archivedAt !== null) return [`session ${id} is archived (since ${s.archivedAt}): ${what} is in its log, but no run takes it in until openboa archive ${id} --undo`];
  const notes: string[] = [];
  if (s.paused) notes.push(`session ${id} is paused (since ${s.paused.since}${s.paused.reason ? `: ${s.paused.reason}` : ''}): ${what} waits until openboa resume ${id}`);
  const asks = s.requiresAction;
  if (asks > 0) notes.push(`session ${id} is waiting on ${asks} answer${asks === 1 ? '' : 's'} (openboa status ${id} lists them); ${what} is taken in once they are answered`);
  if (o.daemonNeeded === false) return notes;
  // Any daemon of the home, on any host (its lock, or a heartbeat).
  if (!(await runningDaemon(home))) notes.push(`no daemon is running on this home (${home.root}): ${what} waits until one starts (openboa daemon), or run the session once now (openboa wake ${id})`);
  return notes;
}

/** waitNotes for the session's snapshot now. */
export async function whyItWaits(ctx: CliContext, id: string, what = 'the message', o: WaitNoteOptions = {}): Promise<string[]> {
  return waitNotes(ctx.home, id, waitStateOf(ctx.store.snapshot(id)), what, o);
}
