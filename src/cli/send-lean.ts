/**
 * The one-shot `openboa send <id> <text...>` (send-lean-form.ts says which
 * command lines), run without the full CLI: no command-line parser, no
 * zod, no schema module, no session store. It does what `send` does
 * (commands/send.ts), through the same pieces: the home (command-home.ts),
 * the id (session-id.ts), the log's checks (session-log.ts), the message
 * (user-message.ts, event-envelope.ts), its delivery (deliver-line.ts:
 * appended, or into inbox/ on a shared home), the notes (why-it-waits.ts)
 * and the report of a failure (report-error.ts). Skipped is only the
 * schema's check of the event, which is built here from checked parts.
 *
 * The notes' state is read from session.json when the log after its cursor
 * holds only messages (wait-state.ts, peekWaitState); otherwise the store
 * is loaded and folds it, as the full send does. Unlike the full send, this
 * leaves session.json as it was (a cache; the next fold catches up).
 */
import { commandHome } from './command-home.js';
import { resolveSessionId } from './session-id.js';
import { outputFor } from './output.js';
import { reportError } from './report-error.js';
import { textArgument } from './stdin.js';
import { waitNotes } from './why-it-waits.js';
import { EXIT } from './exit.js';
import type { LeanSend } from './send-lean-form.js';
import type { RunOptions } from './run.js';
import type { Home } from '../core/foundation/home.js';
import { systemClock } from '../core/foundation/clock.js';
import { systemIds } from '../core/foundation/ids.js';
import { listSessionIds } from '../core/store/session-dirs.js';
import { logFormatAt, requireLog } from '../core/store/session-log.js';
import { userMessage } from '../core/ops/user-message.js';
import { eventEnvelope } from '../core/store/event-envelope.js';
import { deliverLines } from '../core/store/deliver-line.js';
import { Durability } from '../core/store/durability.js';
import { homeIsShared } from '../core/store/shared-home.js';
import { peekWaitState, waitStateOf, type WaitState } from '../core/store/wait-state.js';
import type { StoreDeps } from '../core/store/store-types.js';

/** Runs the send; returns the exit code. Never throws. */
export async function runLeanSend(a: LeanSend, o: Omit<RunOptions, 'deps' | 'signal'>): Promise<number> {
  const out = outputFor(o.stdout, o.stderr, o.env, a.json);
  try {
    const home = commandHome(a.home, o.env, o.cwd);
    const id = resolveSessionId({ home, listIds: () => listSessionIds(home.sessionsDir) }, a.id);
    const p = requireLog(home, id);
    const event = userMessage(await textArgument(a.text, a.rest, o.stdin));
    logFormatAt(home, id, p.events);
    const deps = { clock: systemClock, ids: systemIds(() => systemClock.now()) };
    const e = eventEnvelope(deps, event);
    deliverLines(p, [JSON.stringify(e)], { shared: a.shared || homeIsShared(home), durability: new Durability() });
    const notes = await waitNotes(home, id, peekWaitState(p, id) ?? (await foldedState(home, id, deps)));
    out.result({ id: e.id, type: e.type, created_at: e.created_at, notes }, e.id);
    for (const note of notes) out.warn(note);
    return EXIT.ok;
  } catch (e) {
    return await reportError(out, e);
  }
}

/** The state from a fold of the journals, as the full send reads it (this loads the store and the schema). */
async function foldedState(home: Home, id: string, deps: StoreDeps): Promise<WaitState> {
  const { SessionStore } = await import('../core/store/session-store.js');
  return waitStateOf(new SessionStore(home, deps).snapshot(id));
}
