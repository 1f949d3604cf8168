/**
 * What the operator sees: one line per run start and end (session, trigger,
 * stop reason, duration, tokens, the grade of each outcome it graded, and
 * why it failed when it did) and the
 * daemon's own notices. In text mode each run also shows its work as it
 * happens: the first line of what the agent said, each tool it ran with a
 * short form of its input, and each evaluation of an outcome with its
 * result and the first line of its explanation, clipped to the terminal's
 * width. `--json` prints
 * the start, end and notices as JSON lines, and nothing else.
 */
import type { WakeResult } from '../core/run/wake-api.js';
import { mcpToolName, type SessionEvent } from '../core/schema/index.js';

export interface OperatorLog {
  start(sessionId: string, info: { wakeId: string; trigger: string }): void;
  /** Events a run wrote (text mode shows the agent's words and tool calls). */
  events(sessionId: string, events: readonly SessionEvent[]): void;
  end(r: WakeResult): void;
  notice(message: string, fields?: Record<string, unknown>): void;
}

/** The width lines are clipped to when the output is not a terminal. */
export const DEFAULT_COLUMNS = 120;

/** One line: whitespace runs folded, cut with an ellipsis at `width` characters. */
export function clip(text: string, width: number): string {
  const one = text.replace(/\s+/g, ' ').trim();
  return one.length > width ? `${one.slice(0, Math.max(1, width - 1))}…` : one;
}

/** A short form of a tool call's input: the command of bash, the path of a file tool, else compact JSON. */
export function toolSummary(name: string, input: Record<string, unknown>): string {
  const pick = ['command', 'file_path', 'pattern', 'path', 'name', 'reason', 'wake_id'].find((k) => typeof input[k] === 'string' || typeof input[k] === 'number');
  const value = pick ? String(input[pick]) : JSON.stringify(input);
  return `${name}: ${value}`;
}

/**
 * The grade each outcome got from a run: its last evaluation of the run, as
 * people count them (from 1), e.g. `outcome outc_… evaluation 2: satisfied`.
 * '' when the run graded nothing.
 */
export function gradesOf(r: Pick<WakeResult, 'outcome_evaluations'>): string {
  const last = new Map<string, WakeResult['outcome_evaluations'][number]>();
  for (const e of r.outcome_evaluations) {
    last.delete(e.outcome_id);
    last.set(e.outcome_id, e);
  }
  return [...last.values()].map((e) => `outcome ${e.outcome_id} evaluation ${e.iteration + 1}: ${e.result}`).join('; ');
}

export function operatorLog(write: (line: string) => void, json: boolean, now: () => number, columns = DEFAULT_COLUMNS): OperatorLog {
  const ts = () => new Date(now()).toISOString();
  const emit = (kind: string, text: string, fields: Record<string, unknown>) =>
    write(json ? JSON.stringify({ at: ts(), kind, ...fields }) : `${ts()}  ${text}`);
  return {
    start(sessionId, info) {
      emit('run_start', `start  ${sessionId}  ${info.trigger.padEnd(10)} ${info.wakeId}`, { session_id: sessionId, wake_id: info.wakeId, trigger: info.trigger });
    },
    events(sessionId, events) {
      if (json) return;
      // The prefix lines up under "start  <session id>  ": the time, then an indent.
      const lead = `${ts()}    ${sessionId.slice(-8)}  `;
      const room = Math.max(20, columns - lead.length - 8);
      for (const e of events) {
        if (e.type === 'agent.message') {
          const first = e.content.map((b) => b.text).join('\n').split('\n').find((l) => l.trim() !== '');
          if (first) write(`${lead}said  ${clip(first, room)}`);
        } else if (e.type === 'agent.tool_use' || e.type === 'agent.custom_tool_use' || e.type === 'agent.mcp_tool_use') {
          const ask = e.type === 'agent.custom_tool_use' ? ' (waits for a result)' : e.evaluated_permission === 'ask' ? ' (asks for confirmation)' : e.evaluated_permission === 'deny' ? ' (denied)' : '';
          const name = e.type === 'agent.mcp_tool_use' ? mcpToolName(e.mcp_server_name, e.name) : e.name;
          write(`${lead}tool  ${clip(toolSummary(name, e.input), room - ask.length)}${ask}`);
        } else if (e.type === 'span.outcome_evaluation_end') {
          // The explanation's first line, as for what the agent said: the verdict in brief (a check's command and exit, a grader's summary).
          const first = e.explanation.split('\n').find((l) => l.trim() !== '') ?? '';
          write(`${lead}grade ${clip(`evaluation ${e.iteration + 1}: ${e.result}${first ? `: ${first}` : ''}`, room)}`);
        }
      }
    },
    end(r) {
      const stop = r.status === 'idle' ? (r.stop_reason?.type ?? 'idle') : r.status === 'rescheduling' ? `rescheduled until ${r.retry_at}` : r.status;
      const tokens = r.usage.input_tokens + r.usage.output_tokens;
      const why = r.errors.length ? r.errors[r.errors.length - 1] : null;
      const grades = gradesOf(r);
      emit(
        'run_end',
        `end    ${r.session_id}  ${String(r.trigger).padEnd(10)} ${stop}  ${(r.duration_ms / 1000).toFixed(2)} s  ${tokens} tokens  ${r.tool_calls} tool call(s)${grades ? `  ${grades}` : ''}${r.errors.length ? `  ${r.errors.length} error(s)` : ''}${why ? `: ${clip(why, Math.max(40, columns - 60))}` : ''}`,
        { session_id: r.session_id, wake_id: r.wake_id, trigger: r.trigger, status: r.status, stop_reason: r.stop_reason, retry_at: r.retry_at, duration_ms: r.duration_ms, tokens, tool_calls: r.tool_calls, outcome_evaluations: r.outcome_evaluations, errors: r.errors, last_error: why },
      );
    },
    notice(message, fields = {}) {
      emit('notice', message, { message, ...fields });
    },
  };
}
