/**
 * inbox/ while a run is in progress (docs/daemon.md, "Several hosts on one
 * home"). On a shared home every person's event arrives as a file in the
 * session's inbox/ (store/inbox-drop.ts), not as an append; the run holds
 * the session's lease, so it may move those files into the log at any time
 * (store/inbox.ts), and it does, so they reach it as an appended event does:
 *
 * - at each step, before the steering reads the session (takeInboxFirst):
 *   a message or an outcome is taken in at the next model request, a pause
 *   stops the run there, an interrupt aborts it;
 * - on a shared home, every INBOX_PEEK_MS while a step waits on the model
 *   or a tool (inboxWatch, a run service): a look at inbox/ (two directory
 *   listings), and a drain when it holds something. A drain that brought in
 *   a user.interrupt aborts the run through its control, as the daemon does
 *   when an interrupt is appended to a running session's log (daemon.ts,
 *   evaluate), so a tool or model request in flight is cut short the same
 *   way. On a home of one host a person's events are appended (the store's
 *   delivery), and that path already reaches a run in flight.
 *
 * Nothing is drained once the run is stopping (its control aborted), and
 * never once it is silenced (its lease lost): only the holder may append.
 * A file the drain refuses is reported in the log by the run (a
 * session.error with the inbox report's code, which the fold counts as
 * information, not as the run's error). Each problem once a run: one a drain
 * cannot settle (a file it may not rename) is found again by every look,
 * and would otherwise be a line a second for as long as the run lasts.
 */
import { drainInbox, inboxHasFiles } from '../store/inbox.js';
import { INBOX_REPORT_CODE } from '../store/fold.js';
import type { RunJournal } from './journal.js';
import type { RunService, Steering } from './loop-hooks.js';
import type { RunContext } from './run-context.js';
import { runSlot } from './run-state.js';

/**
 * How often a run looks at inbox/ between its steps: about a second, the
 * latency of an interrupt from another host on top of the file system's
 * own (its attribute and directory caches), for one listing of a usually
 * empty directory.
 */
export const INBOX_PEEK_MS = 1000;

/**
 * The inbox problems this run has reported, as the drain words them. Made at
 * the run's first look from the errors the run holds by then: wake()'s own
 * drain reported its problems before the run opened, and they are among
 * them.
 */
const REPORTED = runSlot('inbox-reported', () => ({ problems: null as Set<string> | null }));

/** The problems of a drain this run has not reported yet, each noted as reported. */
function unreported(ctx: RunContext, journal: RunJournal, problems: readonly string[]): string[] {
  const slot = ctx.state.get(REPORTED);
  const seen = (slot.problems ??= new Set(journal.errors));
  const fresh = [...new Set(problems)].filter((p) => !seen.has(p));
  for (const p of fresh) seen.add(p);
  return fresh;
}

/**
 * Moves what waits in inbox/ into the log, under the run's lease; returns
 * whether any line was appended. Never throws (a drain reports its own
 * failures as problems).
 */
export function drainDuringRun(ctx: RunContext, journal: RunJournal): boolean {
  if (journal.silenced || ctx.control.signal.aborted || !inboxHasFiles(ctx.paths)) return false;
  let drained;
  try {
    const taken = ctx.rt.store.snapshot(ctx.sessionId, { persist: false }).inbox_taken;
    drained = drainInbox(ctx.paths, ctx.rt.deps.ids, taken);
  } catch {
    return false; // the log cannot be folded now: the next look, or the next run, tries again
  }
  const problems = unreported(ctx, journal, drained.problems);
  if (problems.length) {
    journal.emit(problems.map((message) => ({ type: 'session.error' as const, error: { type: 'unknown_error' as const, code: INBOX_REPORT_CODE, message, retry_status: { type: 'terminal' as const } } })));
    journal.noteErrors(problems);
  }
  return drained.lines > 0;
}

/** Wraps the run's steering: each step first takes in what waits in inbox/. */
export function takeInboxFirst(inner: Steering): Steering {
  return {
    poll(ctx, journal) {
      drainDuringRun(ctx, journal);
      return inner.poll(ctx, journal);
    },
  };
}

/**
 * The run service that looks at inbox/ every INBOX_PEEK_MS (on the run's
 * clock) from its opening to its close, on a shared home, and aborts the
 * run for an interrupt it brought in.
 */
export function inboxWatch(): RunService {
  let cancel: (() => void) | null = null;
  return {
    name: 'inbox-watch',
    open(ctx, journal) {
      if (!ctx.rt.store.shared) return;
      const look = () => {
        cancel = null;
        if (ctx.control.signal.aborted) return;
        if (drainDuringRun(ctx, journal)) {
          try {
            const s = ctx.rt.store.snapshot(ctx.sessionId, { persist: false });
            if (s.pending_events.some((p) => p.type === 'user.interrupt')) ctx.control.abort({ kind: 'interrupt' });
          } catch {
            // the step's own steering reads the session again
          }
        }
        if (!ctx.control.signal.aborted) cancel = ctx.rt.deps.clock.setTimer(INBOX_PEEK_MS, look);
      };
      cancel = ctx.rt.deps.clock.setTimer(INBOX_PEEK_MS, look);
    },
    close() {
      cancel?.();
      cancel = null;
    },
  };
}
