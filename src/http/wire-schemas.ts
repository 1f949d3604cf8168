/**
 * The API's wire formats: the bodies and queries the routes accept, as
 * @anthropic-ai/sdk 1.12.0 sends them (resources/beta/sessions/*.d.ts).
 * They belong to the HTTP adapter, not to core/schema (which holds what is
 * on disk); where a field is one the log keeps, the log's schema is reused.
 *
 * Every object is strict: a field this server does not know is a 400 that
 * names it, not a silent no-op (a client that sets `resources` or
 * `vault_ids` learns at once that this home has none).
 */
import * as z from 'zod';
import { DefinitionId, Metadata, OutcomeFields, SessionStatus, TextBlock, Timestamp, UserContentBlock } from '../core/schema/index.js';

/** At most this many events in one POST …/events (the hosted API's limit for initial_events is 50). */
export const MAX_EVENTS_PER_POST = 50;

const EventId = z.string().min(1).max(200);

const UserMessageParams = z.strictObject({ type: z.literal('user.message'), content: z.array(UserContentBlock).min(1, 'expected at least one content block') });
const UserInterruptParams = z.strictObject({ type: z.literal('user.interrupt'), session_thread_id: z.string().nullish(), reason: z.string().max(2000).nullish() });
const UserToolConfirmationParams = z.strictObject({
  type: z.literal('user.tool_confirmation'),
  tool_use_id: EventId,
  result: z.enum(['allow', 'deny']),
  deny_message: z.string().max(10_000).nullish(),
});
const UserCustomToolResultParams = z.strictObject({
  type: z.literal('user.custom_tool_result'),
  custom_tool_use_id: EventId,
  content: z.array(TextBlock).optional(),
  is_error: z.boolean().nullish(),
});
const TextRubric = z.strictObject({ type: z.literal('text'), content: z.string() });
const UserDefineOutcomeParams = z.strictObject({
  type: z.literal('user.define_outcome'),
  description: z.string(),
  rubric: TextRubric.optional(),
  max_iterations: z.number().int().nullish(),
  /** Ours: a shell command whose exit 0 means met, or "auto" (docs/outcomes.md). */
  check: z.string().optional(),
  /** Ours: workspace files the rubric grader reads. */
  files: OutcomeFields.files,
});
/** Ours: the answer to an escalation (docs/context.md): an option picked (from 1) or a message. */
const UserEscalationAnswerParams = z.strictObject({
  type: z.literal('user.escalation_answer'),
  escalation_id: EventId,
  pick: z.number().int().positive().optional(),
  message: z.string().optional(),
}).refine((a) => (a.pick === undefined) !== (a.message === undefined), { message: 'expected exactly one of pick or message' });

export const EventParams = z.discriminatedUnion('type', [
  UserMessageParams,
  UserInterruptParams,
  UserToolConfirmationParams,
  UserCustomToolResultParams,
  UserDefineOutcomeParams,
  UserEscalationAnswerParams,
]);
export type EventParams = z.infer<typeof EventParams>;

export const SendEventsBody = z.strictObject({ events: z.array(EventParams).min(1, 'expected at least one event').max(MAX_EVENTS_PER_POST) });

const AgentRef = z.union([
  DefinitionId,
  z.strictObject({ type: z.literal('agent'), id: DefinitionId, version: z.number().int().positive().optional() }),
]);

export const CreateSessionBody = z.strictObject({
  agent: AgentRef,
  /** Optional here (the hosted API requires it): absent, the agent's own environment. */
  environment_id: DefinitionId.optional(),
  title: z.string().max(500).nullish(),
  metadata: Metadata.optional(),
  initial_events: z.array(z.discriminatedUnion('type', [UserMessageParams, UserDefineOutcomeParams])).max(MAX_EVENTS_PER_POST).optional(),
});

export const UpdateSessionBody = z.strictObject({
  title: z.string().max(500).nullish(),
  metadata: z.record(z.string().min(1).max(64), z.string().max(512).nullable()).nullish(),
});

const Limit = z.coerce.number().int().min(1).max(100);
const Order = z.enum(['asc', 'desc']);
const Bool = z.enum(['true', 'false']).transform((v) => v === 'true');
const Page = z.string().min(1).max(500);

const createdAt = {
  'created_at[gt]': Timestamp.optional(),
  'created_at[gte]': Timestamp.optional(),
  'created_at[lt]': Timestamp.optional(),
  'created_at[lte]': Timestamp.optional(),
};
export type CreatedAtRange = { 'created_at[gt]'?: string | undefined; 'created_at[gte]'?: string | undefined; 'created_at[lt]'?: string | undefined; 'created_at[lte]'?: string | undefined };

export const ListSessionsQuery = z.strictObject({
  limit: Limit.default(20),
  page: Page.optional(),
  order: Order.default('desc'),
  'statuses[]': z.array(SessionStatus).optional(),
  agent_id: DefinitionId.optional(),
  include_archived: Bool.optional(),
  ...createdAt,
});
export type ListSessionsQuery = z.infer<typeof ListSessionsQuery>;

export const ListEventsQuery = z.strictObject({
  limit: Limit.default(20),
  page: Page.optional(),
  order: Order.default('asc'),
  'types[]': z.array(z.string().min(1).max(100)).optional(),
  ...createdAt,
});
export type ListEventsQuery = z.infer<typeof ListEventsQuery>;

export const StreamQuery = z.strictObject({
  'event_deltas[]': z.array(z.enum(['agent.message', 'agent.thinking'])).optional(),
});

/** Whether `at` falls in the range the query asks for (ISO times compare as instants). */
export function inRange(at: string, q: CreatedAtRange): boolean {
  const t = Date.parse(at);
  const b = (k: keyof CreatedAtRange) => (q[k] === undefined ? null : Date.parse(q[k] as string));
  const gt = b('created_at[gt]');
  const gte = b('created_at[gte]');
  const lt = b('created_at[lt]');
  const lte = b('created_at[lte]');
  return (gt === null || t > gt) && (gte === null || t >= gte) && (lt === null || t < lt) && (lte === null || t <= lte);
}
