/**
 * One exchange with a session, for `send --wait` and `chat`: append what the
 * person says (a message, or answers), print what the agent does as it does
 * it, and come back when its turn is over, with what it now waits for.
 *
 * Who runs the session: the daemon when one runs on the home (this process
 * only watches the log), else this process (runUntilSettled: the runs `openboa
 * wake` would make, one after another, while there is something to do). The
 * agent's words go to stdout whole; tool calls, evaluations and errors go to
 * stderr as the daemon's console shows them, so stdout holds just the replies.
 * With --json every event is a JSON line on stdout instead.
 */
import type { CliContext } from './command.js';
import { EscalateInput, isUserEventType, type SessionEvent } from '../core/schema/index.js';
import type { TurnEnd } from '../core/ops/turn-watch.js';
import { stopLabel } from './stop-label.js';

/** A tool use the session waits on, with what a person needs to answer it. */
export interface Waiting {
  id: string;
  name: string;
  kind: 'tool' | 'custom';
  /** The call's input, when this exchange saw it. */
  input: Record<string, unknown> | null;
  /** For an `escalate` call: the question, parsed. */
  escalation: EscalateInput | null;
}

export interface Exchange {
  end: TurnEnd;
  waiting: Waiting[];
  /** Why no turn ended (the session backs off, is paused, archived...), for a person. */
  note: string | null;
}

/** Prints one event of the agent's turn (see the module's contract). */
function printer(ctx: CliContext, seen: Map<string, SessionEvent>) {
  // The run in progress: a line of the agent's counts only inside it (the fold's rule for a runtime line), so a
  // hand-written agent.message appended meanwhile is never shown as the agent's words.
  let running: string | null = null;
  return (e: SessionEvent) => {
    if (e.type === 'session.status_running') running = e.wake_id;
    else if (!isUserEventType(e.type) && e.type !== 'session.created' && e.type !== 'session.updated' && e.wake_id !== running) return;
    if (e.type === 'session.status_idle' || e.type === 'session.status_rescheduled' || e.type === 'session.status_terminated') running = null;
    seen.set(e.id, e);
    if (ctx.json) return ctx.out.data(e);
    const say = (text: string) => ctx.out.note(text);
    switch (e.type) {
      case 'agent.message':
        return ctx.out.line(e.content.map((b) => b.text).join(''));
      case 'agent.tool_use':
      case 'agent.mcp_tool_use':
      case 'agent.custom_tool_use': {
        const input = JSON.stringify(e.input);
        return say(`  tool  ${e.name}: ${input.length > 200 ? `${input.slice(0, 199)}…` : input}`);
      }
      case 'agent.tool_result':
      case 'agent.mcp_tool_result':
        if (e.is_error) say(`  tool error: ${e.content.map((b) => b.text).join('').split('\n')[0]?.slice(0, 200) ?? ''}`);
        return;
      case 'span.outcome_evaluation_end':
        return say(`  grade evaluation ${e.iteration + 1}: ${e.result}: ${e.explanation.split('\n')[0]?.slice(0, 200) ?? ''}`);
      case 'session.error':
        if (e.line === undefined) say(`  error ${e.error.code ?? e.error.type} (${e.error.retry_status.type}): ${e.error.message}`);
        return;
      case 'session.status_rescheduled':
        return say(`  retrying at ${e.retry_at}: ${e.reason}`);
      default:
        return;
    }
  };
}

/**
 * Appends with `append` and waits for the turn that takes it in; `signal`
 * stops the wait (the session goes on in the daemon, or stops at its next
 * step when this process runs it).
 */
export async function converse(ctx: CliContext, id: string, append: () => SessionEvent): Promise<Exchange> {
  const [{ watchTurn }, { runningDaemon }] = await Promise.all([import('../core/ops/turn-watch.js'), import('../core/foundation/daemon-presence.js')]);
  const from = ctx.store.snapshot(id).journals.events;
  const appended = append();
  const seen = new Map<string, SessionEvent>();
  const daemon = await runningDaemon(ctx.home);
  let until: Promise<unknown> | undefined;
  if (!daemon) {
    const { runUntilSettled } = await import('../core/run/run-until-settled.js');
    until = runUntilSettled({ home: ctx.home, store: ctx.store, deps: ctx.deps }, id, { signal: ctx.signal });
  }
  const end = await watchTurn(ctx.store, id, appended.id, { from, signal: ctx.signal, onEvent: printer(ctx, seen), ...(until ? { until } : {}) });
  await until; // its errors are the command's
  const snap = ctx.store.snapshot(id);
  const waiting = snap.open_tool_uses
    .filter((u) => u.permission === 'ask' || u.kind === 'custom')
    .filter((u) => u.answered_by === null)
    .map((u): Waiting => {
      const e = seen.get(u.id);
      const input = e && 'input' in e ? (e.input as Record<string, unknown>) : null;
      const esc = u.kind === 'custom' && u.name === 'escalate' && input ? EscalateInput.safeParse(input) : null;
      return { id: u.id, name: u.name, kind: u.kind, input, escalation: esc?.success ? esc.data : null };
    });
  let note: string | null = null;
  if (end.kind === 'settled') {
    if (snap.paused) note = `session ${id} is paused: nothing runs until openboa resume ${id}`;
    else if (snap.archived_at) note = `session ${id} is archived: nothing runs until openboa archive ${id} --undo`;
    else if (snap.status === 'rescheduling') note = `the run failed and is retried at ${snap.retry_at}${snap.last_error ? ` (${snap.last_error.message})` : ''}; no daemon runs on this home to retry it: openboa wake ${id}, or start one (openboa daemon)`;
    else note = `no run took it in (${snap.status}${snap.stop_reason ? `, ${stopLabel(snap)}` : ''})`;
  }
  return { end, waiting, note };
}
