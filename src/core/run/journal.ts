/**
 * The run journal: the one writer of a run. Everything a run appends goes
 * through emit(), stamped with the run's id and redacted with the run's
 * secrets; it also keeps what the run wrote, its model usage, its tool calls
 * and the error messages it recorded, which become the WakeResult.
 *
 * Invariants:
 *  - Once the run's control is silenced (its lease was lost, or the log
 *    refused the run), the journal writes nothing, to the log or to the
 *    wake queue: another process may own them, or every line would be
 *    refused again.
 *  - Every error recorded through error() is both in the log (session.error)
 *    and in `errors` (redacted), in the same order.
 *  - A tool use that will not run gets its error result through
 *    toolErrors(), one line of text for all of them.
 */
import type { Redactor } from '../foundation/redact.js';
import type { SessionStore } from '../store/session-store.js';
import type { ModelUsage, NewEvent, NewWakeScheduled, SessionEvent } from '../schema/index.js';
import type { Ending, Runtime } from './run-context.js';
import type { RunControl } from './run-control.js';
import { rescheduleAfter, retryingError, type Failure, type SessionErrorType } from './failed-attempt.js';

/** What a run's model requests used, summed (wake()'s result and the usage file report it). */
export interface RunUsage extends ModelUsage {
  model_requests: number;
}

export type RetryStatus = 'retrying' | 'exhausted' | 'terminal';

export interface JournalOptions {
  store: SessionStore;
  sessionId: string;
  runId: string;
  redactor: Redactor;
  control: RunControl;
  /** Errors reported before the run opened (bad lines), carried into the result. */
  reported?: readonly string[];
  /** Sees each batch as written (after redaction). Its failure is not the run's. */
  onEvents?: (events: readonly SessionEvent[]) => void;
}

export class RunJournal {
  /** Every event this run appended, in order. */
  readonly written: SessionEvent[] = [];
  readonly usage: RunUsage = { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, model_requests: 0 };
  /** Redacted messages of the errors this run recorded (and those reported before it opened). */
  readonly errors: string[];
  private calls = 0;
  private opened: string | null = null;

  constructor(private readonly o: JournalOptions) {
    this.errors = [...(o.reported ?? [])];
  }

  get toolCalls(): number {
    return this.calls;
  }

  /** When this run's opening record (its first session.status_running) was written; null before. */
  get openedAt(): string | null {
    return this.opened;
  }

  /** Nothing more may be written (see RunControl.silenced). */
  get silenced(): boolean {
    return this.o.control.silenced;
  }

  /** Appends events stamped with this run's id; returns them as written ([] once silenced). */
  emit(events: readonly NewEvent[]): SessionEvent[] {
    if (this.o.control.silenced || events.length === 0) return [];
    const out = this.o.store.appendEvents(this.o.sessionId, [...events], { wakeId: this.o.runId, redactor: this.o.redactor });
    this.written.push(...out);
    this.opened ??= out.find((e) => e.type === 'session.status_running' && !e.continuation)?.created_at ?? null;
    try {
      this.o.onEvents?.(out);
    } catch {
      // an observer's failure is not the run's
    }
    return out;
  }

  /** Settles revisits in the wake queue (consumed by this run, or cancelled); nothing once silenced. */
  settleWakes(type: 'wake.consumed' | 'wake.cancelled', wakeIds: readonly string[], detail: { wakeRunId?: string; reason?: string }): void {
    if (this.o.control.silenced || wakeIds.length === 0) return;
    this.o.store.settleWakes(this.o.sessionId, type, wakeIds, detail);
  }

  /** Schedules a revisit (a retry of one this run took in); nothing once silenced. */
  scheduleWake(w: NewWakeScheduled): void {
    if (this.o.control.silenced) return;
    this.o.store.scheduleWake(this.o.sessionId, w);
  }

  /** Records a session.error. */
  error(e: { type?: SessionErrorType; code: string; message: string; retry: RetryStatus }): void {
    this.emit([{ type: 'session.error', error: { type: e.type ?? 'unknown_error', code: e.code, message: e.message, retry_status: { type: e.retry } } }]);
    this.errors.push(this.o.redactor.text(e.message));
  }

  /** Records errors that are not session.error lines of their own (e.g. with a line number); see errors. */
  noteErrors(messages: readonly string[]): void {
    for (const m of messages) this.errors.push(this.o.redactor.text(m));
  }

  /**
   * A failed attempt: the retrying error now, and the ending that
   * reschedules the session with backoff after `failures` failures in a row.
   */
  failedAttempt(rt: Runtime, failures: number, f: Failure, reason?: string): Extract<Ending, { kind: 'rescheduled' }> {
    this.emit([retryingError(f)]);
    this.errors.push(this.o.redactor.text(f.message));
    return rescheduleAfter(rt, failures, f, reason);
  }

  /** The result of a tool call that ran (an agent.mcp_tool_result for an MCP tool use). */
  toolResult(toolUseId: string, text: string, isError: boolean): void {
    this.emit([this.resultEvent(toolUseId, text, isError, this.mcpUseIds([toolUseId]))]);
  }

  /** Error results, in one write, for tool uses that will not run (or whose outcome is unknown). */
  toolErrors(toolUseIds: readonly string[], text: string): void {
    if (toolUseIds.length === 0) return;
    const mcp = this.mcpUseIds(toolUseIds);
    this.emit(toolUseIds.map((id) => this.resultEvent(id, text, true, mcp)));
  }

  private resultEvent(id: string, text: string, isError: boolean, mcp: ReadonlySet<string>): NewEvent {
    const content = [{ type: 'text' as const, text }];
    return mcp.has(id) ? { type: 'agent.mcp_tool_result', mcp_tool_use_id: id, content, is_error: isError } : { type: 'agent.tool_result', tool_use_id: id, content, is_error: isError };
  }

  /**
   * Which of these tool uses are agent.mcp_tool_use events (answered by an
   * agent.mcp_tool_result): those this run wrote, else as the fold has them
   * open (a use a crashed run left, one asked in an earlier run).
   */
  private mcpUseIds(ids: readonly string[]): Set<string> {
    const out = new Set<string>();
    const unknown: string[] = [];
    for (const id of ids) {
      const mine = this.written.find((e) => e.id === id);
      if (mine) {
        if (mine.type === 'agent.mcp_tool_use') out.add(id);
      } else unknown.push(id);
    }
    if (unknown.length === 0) return out;
    try {
      for (const u of this.o.store.snapshot(this.o.sessionId, { persist: false }).open_tool_uses) if (u.mcp_server_name !== undefined && unknown.includes(u.id)) out.add(u.id);
    } catch {
      // the fold failed: the emit that follows fails the same way and says why
    }
    return out;
  }

  /** Counts a model request before it is sent. */
  countRequest(): void {
    this.usage.model_requests += 1;
  }

  /** Adds a reply's usage. */
  addUsage(u: ModelUsage): void {
    for (const k of ['input_tokens', 'output_tokens', 'cache_creation_input_tokens', 'cache_read_input_tokens'] as const) this.usage[k] += u[k];
  }

  /** Counts a tool call that runs. */
  countToolCall(): void {
    this.calls += 1;
  }
}
