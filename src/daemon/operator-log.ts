/**
 * What the operator sees: one line per run start and end (session, trigger,
 * stop reason, duration, tokens) and the daemon's own notices; `--json`
 * prints the same as JSON lines.
 */
import type { WakeResult } from '../core/run/run-state.js';

export interface OperatorLog {
  start(sessionId: string, info: { wakeId: string; trigger: string }): void;
  end(r: WakeResult): void;
  notice(message: string, fields?: Record<string, unknown>): void;
}

export function operatorLog(write: (line: string) => void, json: boolean, now: () => number): OperatorLog {
  const ts = () => new Date(now()).toISOString();
  const emit = (kind: string, text: string, fields: Record<string, unknown>) =>
    write(json ? JSON.stringify({ at: ts(), kind, ...fields }) : `${ts()}  ${text}`);
  return {
    start(sessionId, info) {
      emit('run_start', `start  ${sessionId}  ${info.trigger.padEnd(10)} ${info.wakeId}`, { session_id: sessionId, wake_id: info.wakeId, trigger: info.trigger });
    },
    end(r) {
      const stop = r.status === 'idle' ? (r.stop_reason?.type ?? 'idle') : r.status === 'rescheduling' ? `rescheduled until ${r.retry_at}` : r.status;
      const tokens = r.usage.input_tokens + r.usage.output_tokens;
      emit(
        'run_end',
        `end    ${r.session_id}  ${String(r.trigger).padEnd(10)} ${stop}  ${(r.duration_ms / 1000).toFixed(2)} s  ${tokens} tokens  ${r.tool_calls} tool call(s)${r.errors.length ? `  ${r.errors.length} error(s)` : ''}`,
        { session_id: r.session_id, wake_id: r.wake_id, trigger: r.trigger, status: r.status, stop_reason: r.stop_reason, retry_at: r.retry_at, duration_ms: r.duration_ms, tokens, tool_calls: r.tool_calls, errors: r.errors },
      );
    },
    notice(message, fields = {}) {
      emit('notice', message, { message, ...fields });
    },
  };
}
