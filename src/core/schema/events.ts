/**
 * events.jsonl: one JSON object per line (SPEC §4).
 *
 * Every event shares the envelope `{id, type, created_at}`; events written
 * during a run also carry `wake_id`. Lines written by hand may omit `id` and
 * `created_at` (the reader derives `sevt_line_<N>` and the read time) and may
 * give `content` as a plain string. Parsing a line therefore yields the
 * normalised event, whatever shorthand it used.
 *
 * Names and payloads follow Claude Managed Agents; fields of our own
 * (`wake_id`, `created_at`, `model_tool_use_id`, `code`, `line`, ...) are
 * extensions the SDK's types do not have.
 */
import * as z from 'zod';
import { DefinitionId, Metadata, ModelUsage, SessionId, TextBlock, TextContent, Timestamp, UserContent } from './common.js';
import { EvaluationResult, OutcomeFields } from './outcomes.js';
import { CompactionFields, ContextWarningFields, oneContextWarningKind } from './context.js';
import { PauseFields, ResumeFields, RunPausedFields } from './pause.js';
import { ModelRequestStartFields } from './model-settings.js';
import { GuardEventFields } from './guards.js';
import { McpToolResultFields, McpToolUseFields } from './mcp.js';
import { CHILD_INGRESS_TYPES, SpawnRefusedFields, ThreadCreatedFields, ThreadMessageReceivedFields, ThreadMessageSentFields, ThreadStatusIdleFields } from './delegation.js';

const envelope = {
  id: z.string().min(1).optional(),
  created_at: Timestamp.optional(),
  wake_id: z.string().min(1).optional(),
  /** The inbox/ file this line was moved in from (set by the runtime when it moves it). */
  inbox: z.string().min(1).optional(),
};

/**
 * The schema of one event type. Parsing uses `.loose()` (see LOOSE_EVENT_SCHEMAS)
 * so fields a writer added are kept; the inferred type lists the known ones.
 */
function event<T extends string, S extends z.ZodRawShape>(type: T, shape: S) {
  // One object, not object().extend(shape): every schema made at import is paid by every process. Same shape: `shape` wins.
  const fields = { type: z.literal(type), ...envelope, ...shape } as Omit<{ type: z.ZodLiteral<T> } & typeof envelope, keyof S> & S;
  return z.object(fields);
}

// ---------------------------------------------------------------- user (ingress)

export const UserMessage = event('user.message', {
  content: UserContent,
  /**
   * Ours, on a task or follow-up a parent session's run wrote
   * (spawn_session, send_to_session): when that run opened. The work it asks
   * for counts as asked for then, so an interrupt of an ancestor after that
   * time stops it (docs/delegation.md); absent: the line's created_at.
   */
  mandate_at: Timestamp.optional(),
  /**
   * Ours: the W3C trace context of whoever sent it (`00-<trace id>-<span id>-<flags>`).
   * The run that takes it in joins that trace (docs/observability.md);
   * a parent's run puts its own on a child's task, and the child's run links to it.
   */
  traceparent: z.string().regex(/^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/, 'expected a W3C traceparent: 00-<32 hex>-<16 hex>-<2 hex>').optional(),
});
export const UserInterrupt = event('user.interrupt', { reason: z.string().nullish() });
export const UserToolConfirmation = event('user.tool_confirmation', {
  tool_use_id: z.string().min(1),
  result: z.enum(['allow', 'deny']),
  deny_message: z.string().nullish(),
});
export const UserCustomToolResult = event('user.custom_tool_result', {
  custom_tool_use_id: z.string().min(1),
  content: TextContent.optional(),
  is_error: z.boolean().nullish(),
});
/** What "done" means (schema/outcomes.ts; docs/outcomes.md). Starts work by itself, like a message. */
export const UserDefineOutcome = event('user.define_outcome', OutcomeFields);

// ---------------------------------------------------------------- session

/** Overrides a session may carry on top of its agent and environment. */
export const SessionOverrides = z.strictObject({
  env: z.record(z.string(), z.string()).optional(),
  session_token_budget: z.number().int().positive().nullable().optional(),
});
export type SessionOverrides = z.infer<typeof SessionOverrides>;

/** The format of events.jsonl (format-constants.ts). */
export { LOG_FORMAT } from './format-constants.js';

export const SessionCreated = event('session.created', {
  /** The log's format (LOG_FORMAT when the runtime made the session); absent: 0. */
  format: z.number().int().nonnegative().optional(),
  agent_id: DefinitionId,
  environment_id: DefinitionId,
  title: z.string().nullish(),
  parent_session_id: SessionId.nullish(),
  /** Ours: how deep below its root a child session is (1 for a root's child); absent for a root. */
  depth: z.number().int().positive().optional(),
  /** Ours: the tightest max_spawn_depth of its ancestors, which binds its own spawns too. */
  tree_max_depth: z.number().int().nonnegative().optional(),
  /** Ours: the tightest max_tree_sessions and max_spawns_per_minute of its ancestors (docs/delegation.md). */
  tree_max_sessions: z.number().int().positive().optional(),
  tree_max_spawns_per_minute: z.number().int().nonnegative().optional(),
  overrides: SessionOverrides.optional(),
  /** Key-value pairs a caller attaches to the session (Managed Agents' `metadata`). */
  metadata: Metadata.optional(),
});

/** A change to the session's own definition (title, overrides, metadata); applies from the next run. */
export const SessionUpdated = event('session.updated', {
  title: z.string().nullish(),
  overrides: SessionOverrides.optional(),
  /** A patch of the metadata: a string sets the key, null removes it. */
  metadata: z.record(z.string().min(1).max(64), z.string().max(512).nullable()).optional(),
  /** true: archived (kept, never woken, hidden from listings); false: back in use. */
  archived: z.boolean().optional(),
});

/**
 * What started a run: new events, a due revisit, a person (`openboa wake`),
 * a run that died (recovery), the retry of a run that failed (retry), or a
 * child session.
 */
export const Trigger = z.enum(['event', 'wake_queue', 'manual', 'recovery', 'retry', 'child']);
export type Trigger = z.infer<typeof Trigger>;

export const ConsumedWakeRef = z.object({
  id: z.string(),
  reason: z.string(),
  due_at: Timestamp,
});

export const SessionStatusRunning = event('session.status_running', {
  wake_id: z.string().min(1),
  trigger: Trigger,
  processed_event_ids: z.array(z.string()),
  /** Revisits this run consumed, with their reasons, so the conversation can be rebuilt from the log. */
  wakes: z.array(ConsumedWakeRef).optional(),
  /** true on the records that take in messages arriving during a run (mid-run steering). */
  continuation: z.boolean().optional(),
  /**
   * The note that opens this run's part of the conversation (time, run, why
   * it woke, pending revisits), kept here so a rebuilt conversation is the
   * same byte for byte; only on a run that takes something in.
   */
  context: z.string().optional(),
  /** HMAC of the session and run ids under the session's run key (src/core/store/run-key.ts): only the runtime can open a run. */
  proof: z.string().optional(),
  /** The pinned created_at of taken-in events whose lines had none (their first read; see session.json's pending_events). */
  created_at_of: z.record(z.string(), Timestamp).optional(),
});

export const StopReason = z.discriminatedUnion('type', [
  z.object({ type: z.literal('end_turn') }),
  z.object({ type: z.literal('requires_action'), event_ids: z.array(z.string()) }),
  z.object({ type: z.literal('retries_exhausted') }),
  z.object({ type: z.literal('budget_reached') }),
  z.object({ type: z.literal('refusal') }),
]);
export type StopReason = z.infer<typeof StopReason>;

export const RefusalDetails = z.object({
  type: z.literal('refusal'),
  category: z.string().nullable(),
  explanation: z.string().nullable(),
});

export const SessionStatusIdle = event('session.status_idle', {
  wake_id: z.string().min(1).optional(),
  stop_reason: StopReason,
  stop_details: RefusalDetails.nullable().default(null),
});

export const SessionStatusRescheduled = event('session.status_rescheduled', {
  reason: z.string(),
  retry_at: Timestamp,
});

export const SessionStatusTerminated = event('session.status_terminated', { reason: z.string() });

export const ERROR_TYPES = [
  'unknown_error',
  'model_overloaded_error',
  'model_rate_limited_error',
  'model_request_failed_error',
  'mcp_connection_failed_error',
  'mcp_authentication_failed_error',
  'billing_error',
  'credential_host_unreachable_error',
  'tool_use_limit_reached_error',
  'compaction_limit_reached_error',
] as const;

export const SessionErrorObject = z.looseObject({
  type: z.enum(ERROR_TYPES),
  message: z.string(),
  retry_status: z.object({ type: z.enum(['retrying', 'exhausted', 'terminal']) }),
  /** Our finer reason: invalid_event, missing_api_key, ... */
  code: z.string().optional(),
});
export type SessionErrorObject = z.infer<typeof SessionErrorObject>;

export const SessionError = event('session.error', {
  error: SessionErrorObject,
  /** The rejected line, for errors about a line of a journal. */
  line: z.number().int().positive().optional(),
  /** Which journal `line` refers to; events.jsonl when absent. */
  file: z.enum(['events.jsonl', 'wake-queue.jsonl']).optional(),
  /** The rejected event's id, when it had one. */
  event_id: z.string().optional(),
});

/** A guard acted (schema/guards.ts; docs/context.md): our own type. */
export const SessionGuard = event('session.guard', GuardEventFields);

// ---------------------------------------------------------------- spans

export const SpanModelRequestStart = event('span.model_request_start', ModelRequestStartFields);
export const SpanModelRequestEnd = event('span.model_request_end', {
  model_request_start_id: z.string(),
  is_error: z.boolean(),
  model_usage: ModelUsage,
  /** Our extension: the share of this request's input read from the prompt cache (cache_read / all input), 0–1. */
  cache_read_share: z.number().min(0).max(1).optional(),
  /** Our extension: what this request cost, USD, at its model's price (schema/pricing.ts). */
  cost_usd: z.number().nonnegative().optional(),
});

/** The share of input tokens read from the prompt cache: cache reads over all input (uncached, written, read). */
export function cacheReadShare(u: { input_tokens: number; cache_creation_input_tokens: number; cache_read_input_tokens: number }): number {
  const all = u.input_tokens + u.cache_creation_input_tokens + u.cache_read_input_tokens;
  return all > 0 ? Math.round((u.cache_read_input_tokens / all) * 1000) / 1000 : 0;
}
export const SpanOutcomeEvaluationStart = event('span.outcome_evaluation_start', {
  outcome_id: z.string(),
  iteration: z.number().int().nonnegative(),
});
export const SpanOutcomeEvaluationEnd = event('span.outcome_evaluation_end', {
  outcome_evaluation_start_id: z.string(),
  outcome_id: z.string(),
  iteration: z.number().int().nonnegative(),
  result: EvaluationResult,
  explanation: z.string(),
  usage: ModelUsage,
  /** Our extension: the model requests this evaluation made (the rubric grader's; 0 for a check alone). */
  model_requests: z.number().int().nonnegative().optional(),
  /** Our extension: what the grader's requests cost, USD (schema/pricing.ts). */
  cost_usd: z.number().nonnegative().optional(),
});
/** A heartbeat while an evaluation runs (at most every 10 s). */
export const SpanOutcomeEvaluationOngoing = event('span.outcome_evaluation_ongoing', {
  outcome_id: z.string(),
  iteration: z.number().int().nonnegative(),
});

// ---------------------------------------------------------------- agent

export const AgentMessage = event('agent.message', { content: z.array(TextBlock) });
/** A marker; our extension keeps the block so it can be echoed back to the model. */
export const AgentThinking = event('agent.thinking', {
  thinking: z.string().optional(),
  signature: z.string().optional(),
  redacted_data: z.string().optional(),
});
export const EvaluatedPermission = z.enum(['allow', 'ask', 'deny']);
export const AgentToolUse = event('agent.tool_use', {
  name: z.string(),
  input: z.record(z.string(), z.unknown()),
  model_tool_use_id: z.string(),
  evaluated_permission: EvaluatedPermission,
});
export const AgentToolResult = event('agent.tool_result', {
  tool_use_id: z.string(),
  content: z.array(TextBlock),
  is_error: z.boolean(),
});
export const AgentCustomToolUse = event('agent.custom_tool_use', {
  name: z.string(),
  input: z.record(z.string(), z.unknown()),
  model_tool_use_id: z.string(),
});
/** A compaction (schema/context.ts; docs/context.md): durable, so a rebuild needs no model call. */
export const AgentThreadContextCompacted = event('agent.thread_context_compacted', CompactionFields);
/** Our own: the agent was told how full its context window is, or a request cut the summary or VITAL lines (schema/context.ts). */
export const SessionContextWarning = event('session.context_warning', ContextWarningFields).refine(oneContextWarningKind, { message: 'expected either threshold or cut' });

// ---------------------------------------------------------------- union

export const EVENT_SCHEMAS = {
  'user.message': UserMessage,
  'user.interrupt': UserInterrupt,
  'user.tool_confirmation': UserToolConfirmation,
  'user.custom_tool_result': UserCustomToolResult,
  'user.define_outcome': UserDefineOutcome,
  'user.pause': event('user.pause', PauseFields),
  'user.resume': event('user.resume', ResumeFields),
  'session.run_paused': event('session.run_paused', RunPausedFields),
  'session.created': SessionCreated,
  'session.updated': SessionUpdated,
  'session.status_running': SessionStatusRunning,
  'session.status_idle': SessionStatusIdle,
  'session.status_rescheduled': SessionStatusRescheduled,
  'session.status_terminated': SessionStatusTerminated,
  'session.error': SessionError,
  'session.guard': SessionGuard,
  'session.thread_created': event('session.thread_created', ThreadCreatedFields),
  'session.spawn_refused': event('session.spawn_refused', SpawnRefusedFields),
  'agent.thread_message_sent': event('agent.thread_message_sent', ThreadMessageSentFields),
  'agent.thread_message_received': event('agent.thread_message_received', ThreadMessageReceivedFields),
  'session.thread_status_idle': event('session.thread_status_idle', ThreadStatusIdleFields),
  'span.model_request_start': SpanModelRequestStart,
  'span.model_request_end': SpanModelRequestEnd,
  'span.outcome_evaluation_start': SpanOutcomeEvaluationStart,
  'span.outcome_evaluation_ongoing': SpanOutcomeEvaluationOngoing,
  'span.outcome_evaluation_end': SpanOutcomeEvaluationEnd,
  'agent.message': AgentMessage,
  'agent.thinking': AgentThinking,
  'agent.tool_use': AgentToolUse,
  'agent.tool_result': AgentToolResult,
  'agent.custom_tool_use': AgentCustomToolUse,
  'agent.thread_context_compacted': AgentThreadContextCompacted,
  'session.context_warning': SessionContextWarning,
  'agent.mcp_tool_use': event('agent.mcp_tool_use', McpToolUseFields),
  'agent.mcp_tool_result': event('agent.mcp_tool_result', McpToolResultFields),
} as const;

export type EventType = keyof typeof EVENT_SCHEMAS;

const looseSchemas = new Map<EventType, (typeof EVENT_SCHEMAS)[EventType]>();

/**
 * The parser of one event type that keeps unknown fields, so a line read
 * back loses nothing. Made at its first use: a process reads a few types
 * (a one-shot `openboa send`, one or two), yet building all of them at
 * import was paid by every process.
 */
export function looseEventSchema<T extends EventType>(type: T): (typeof EVENT_SCHEMAS)[T] {
  let s = looseSchemas.get(type);
  if (!s) looseSchemas.set(type, (s = EVENT_SCHEMAS[type].loose()));
  return s as (typeof EVENT_SCHEMAS)[T];
}

export const EVENT_TYPES = Object.keys(EVENT_SCHEMAS) as EventType[];

/**
 * Ingress: events written from outside any run of the session, by a person,
 * a program, or a child session's runtime (schema/delegation.ts); they count
 * as pending until a run takes them in (user.pause and user.resume apply
 * where their line sits: schema/pause.ts).
 */
export const USER_EVENT_TYPES = [
  'user.message',
  'user.interrupt',
  'user.tool_confirmation',
  'user.custom_tool_result',
  'user.define_outcome',
  'user.pause',
  'user.resume',
  ...CHILD_INGRESS_TYPES,
] as const satisfies readonly EventType[];
export type UserEventType = (typeof USER_EVENT_TYPES)[number];

export function isEventType(t: unknown): t is EventType {
  return typeof t === 'string' && Object.hasOwn(EVENT_SCHEMAS, t);
}

export function isUserEventType(t: string): t is UserEventType {
  return (USER_EVENT_TYPES as readonly string[]).includes(t);
}

type Parsed<T extends EventType> = z.output<(typeof EVENT_SCHEMAS)[T]>;

/** A parsed event with its envelope filled in (id, created_at always present). */
export type SessionEvent = {
  [T in EventType]: Omit<Parsed<T>, 'id' | 'created_at'> & { id: string; created_at: string };
}[EventType];

export type EventOf<T extends EventType> = Extract<SessionEvent, { type: T }>;

/**
 * What a writer hands to the store: an event without its envelope. The store
 * assigns `id` and `created_at`; `id` may come set when the writer promised
 * it before the event was written (a reply's text previewed while the model
 * streams it: run/reply-preview.ts), minted by the same Ids.
 */
export type NewEvent = {
  [T in EventType]: Omit<z.input<(typeof EVENT_SCHEMAS)[T]>, 'id' | 'created_at'> & { id?: string };
}[EventType];
