/**
 * The log as people and programs read it (`openboa events`, runtime/event-feed.md):
 * every line normalised, user events with their derived `processed_at` (the
 * time of the session.status_running that took them in; null while pending),
 * and bad lines shown where they are, with the error the runtime reported.
 */
import type { ParsedEventLine } from '../store/parse-line.js';
import type { SessionEvent } from '../schema/index.js';
import { DEFAULT_MAX_ITERATIONS, describeContextCut, isPauseEventType, isUserEventType, mcpToolName, outcomeIdOf } from '../schema/index.js';
import { cutHead } from '../foundation/text-cut.js';

export type EventView =
  | {
      line: number;
      event: SessionEvent & { processed_at: string | null };
      error: string | null;
      /** The line has no created_at and none was recorded for it: `created_at` is the report of it, or the time of this read. */
      undated?: true;
    }
  | { line: number; invalid: { code: string; message: string } };

/** Normalises parsed lines; `processed_at` needs the whole log, so pass all of it. */
export function viewEvents(lines: readonly ParsedEventLine[]): EventView[] {
  const processedAt = new Map<string, string>();
  const reportedErrors = new Map<number, { message: string; at: string }>();
  for (const l of lines) {
    if (l.kind !== 'event') continue;
    const e = l.event;
    if (e.type === 'session.status_running') for (const id of e.processed_event_ids) if (!processedAt.has(id)) processedAt.set(id, e.created_at);
    if (e.type === 'session.error' && e.line !== undefined && (e.file ?? 'events.jsonl') === 'events.jsonl') reportedErrors.set(e.line, { message: e.error.message, at: e.created_at });
  }
  const out: EventView[] = [];
  for (const l of lines) {
    if (l.kind === 'blank') continue;
    if (l.kind === 'invalid') {
      out.push({ line: l.rejection.line, invalid: { code: l.rejection.code, message: l.rejection.message } });
      continue;
    }
    const report = reportedErrors.get(l.line);
    // A line without a time that nothing pinned: shown at the time of the runtime's report of it, if any (stable), else undated.
    const e = l.readTime && report ? { ...l.event, created_at: report.at } : l.event;
    // A pause or resume applies where its line sits (unless a run took it in): it is never pending.
    const processed_at = isUserEventType(e.type) ? (processedAt.get(e.id) ?? (isPauseEventType(e.type) ? e.created_at : null)) : e.created_at;
    out.push({ line: l.line, event: { ...e, processed_at }, error: report?.message ?? null, ...(l.readTime && !report ? { undated: true as const } : {}) });
  }
  return out;
}

const MAX = 100;
const clip = (s: string, n = MAX) => {
  const one = s.replace(/\s+/g, ' ').trim();
  return one.length > n ? `${cutHead(one, n - 1)}…` : one;
};

/** The first non-empty line of `text`, clipped. */
const firstLine = (text: string, n = MAX) => clip(text.split('\n').find((l) => l.trim() !== '') ?? '', n);

/**
 * An outcome's evaluation as people count it: from 1 (the events' `iteration`
 * counts from 0, as Managed Agents' does).
 */
const evaluation = (e: { outcome_id: string; iteration: number }) => `${e.outcome_id} evaluation ${e.iteration + 1}`;

/** How an outcome is graded, in a few words: its check, its rubric, its bound. */
export function gradedBy(e: Extract<SessionEvent, { type: 'user.define_outcome' }>): string {
  const check = e.check ? ('auto' in e.check ? 'check auto' : `check \`${clip(e.check.command, 40)}\``) : null;
  return [check, e.rubric ? 'rubric' : null, `at most ${e.max_iterations ?? DEFAULT_MAX_ITERATIONS} evaluation(s)`].filter(Boolean).join(', ');
}

function textOf(blocks: ReadonlyArray<{ type: string; text?: string }> | undefined): string {
  return (blocks ?? []).map((b) => (b.type === 'text' ? (b.text ?? '') : `[${b.type}]`)).join(' ');
}

/** One short human line describing an event's payload. */
export function describeEvent(e: SessionEvent): string {
  switch (e.type) {
    case 'user.message':
    case 'agent.message':
      return clip(textOf(e.content));
    case 'user.interrupt':
      return e.reason ? clip(e.reason) : '';
    case 'user.tool_confirmation':
      return `${e.result} ${e.tool_use_id}${e.deny_message ? `: ${clip(e.deny_message, 60)}` : ''}`;
    case 'user.pause':
      return e.reason ? clip(e.reason) : '';
    case 'session.run_paused':
      return `stopped by ${e.pause_event_id}`;
    case 'user.custom_tool_result':
      return `${e.custom_tool_use_id}${e.is_error ? ' (error)' : ''}: ${clip(textOf(e.content), 60)}`;
    case 'user.define_outcome':
      return `${outcomeIdOf(e.id)} "${clip(e.description, 60)}"; ${gradedBy(e)}`;
    case 'session.created':
      return `agent ${e.agent_id}, environment ${e.environment_id}${e.title ? `, "${clip(e.title, 40)}"` : ''}`;
    case 'session.updated':
      return clip(JSON.stringify({ title: e.title, overrides: e.overrides }), 80);
    case 'session.status_running':
      return `${e.wake_id} ${e.trigger}${e.continuation ? ' (continued)' : ''}; took in ${e.processed_event_ids.length} event(s)${e.wakes?.length ? `, ${e.wakes.length} wake(s)` : ''}`;
    case 'session.status_idle':
      return e.stop_reason.type === 'requires_action' ? `requires_action: ${e.stop_reason.event_ids.join(', ')}` : e.stop_reason.type;
    case 'session.status_rescheduled':
      return `${clip(e.reason, 60)}; retry at ${e.retry_at}`;
    case 'session.status_terminated':
      return clip(e.reason);
    case 'session.error':
      return `${e.error.type}${e.error.code ? `/${e.error.code}` : ''} (${e.error.retry_status.type}): ${clip(e.error.message)}`;
    case 'span.model_request_start':
      return `${e.model ?? ''}${e.fallback ? ` (fallback for ${e.fallback.from} after ${e.fallback.failures} failed attempts in a row)` : ''}`;
    case 'session.guard':
      return `${e.guard} ${e.action}: ${clip(e.message)}`;
    case 'span.model_request_end':
      return `${e.is_error ? 'error, ' : ''}in ${e.model_usage.input_tokens} out ${e.model_usage.output_tokens} tokens`;
    case 'agent.tool_use':
    case 'agent.custom_tool_use':
      return `${e.name} ${clip(JSON.stringify(e.input), 80)}${e.type === 'agent.tool_use' && e.evaluated_permission !== 'allow' ? ` [${e.evaluated_permission}]` : ''}`;
    case 'agent.tool_result':
    case 'agent.mcp_tool_result':
      return `${e.is_error ? 'error: ' : ''}${clip(textOf(e.content))}`;
    case 'agent.mcp_tool_use':
      return `${mcpToolName(e.mcp_server_name, e.name)} ${clip(JSON.stringify(e.input), 80)}${e.evaluated_permission !== 'allow' ? ` [${e.evaluated_permission}]` : ''}`;
    case 'agent.thread_context_compacted':
      return `${e.tokens_before} → ${e.tokens_after} tokens; ${e.summary_path}`;
    case 'span.outcome_evaluation_start':
      return evaluation(e);
    case 'span.outcome_evaluation_ongoing':
      return `${evaluation(e)} still grading`;
    case 'span.outcome_evaluation_end':
      return `${evaluation(e)}: ${e.result}: ${firstLine(e.explanation, 80)}`;
    case 'user.resume':
      return '';
    case 'agent.thinking':
      return e.thinking ? clip(e.thinking) : e.redacted_data ? '(redacted)' : '';
    case 'session.context_warning':
      if (e.cut) return `cut to fit the window: ${describeContextCut(e.cut)}`;
      return `${Math.round((e.threshold ?? 0) * 100)} % of the window: ${e.tokens} of ${e.window} tokens${e.silent ? ' (recorded, not said)' : ''}`;
    case 'session.thread_created':
      return `child ${e.session_thread_id} (${e.agent_name})${e.title ? ` "${clip(e.title, 40)}"` : ''}${e.depth ? `, depth ${e.depth}` : ''}`;
    case 'agent.thread_message_sent':
      return `to ${e.to_session_thread_id}${e.to_agent_name ? ` (${e.to_agent_name})` : ''}: ${clip(textOf(e.content), 60)}`;
    case 'agent.thread_message_received':
      return `from ${e.from_session_thread_id}${e.from_agent_name ? ` (${e.from_agent_name})` : ''}: ${clip(textOf(e.content), 60)}`;
    case 'session.thread_status_idle':
      return `${e.session_thread_id} (${e.agent_name}): ${e.stop_reason.type}${e.tree_usage ? `, tree cost ${e.tree_usage.cost_usd.toFixed(4)} USD` : ''}`;
    case 'session.spawn_refused':
      return `${e.agent_name} (${e.reason}): ${clip(e.message)}`;
    default:
      // Every event type has its line: a new one fails to type-check here until it gets one.
      return e satisfies never;
  }
}
