/**
 * Delegation (docs/delegation.md): a session hands work to child sessions
 * and picks up their reports. A child is an ordinary session folder whose
 * session.created names its parent and its depth.
 *
 * Events, in Managed Agents' multi-agent shapes:
 *  - in the parent's log, written by its run: `session.thread_created`
 *    (a child was made) and `agent.thread_message_sent` (the parent wrote to
 *    a child);
 *  - in the parent's log, written from outside its runs (the same ingress
 *    as a person's line): `agent.thread_message_received` (a child's report
 *    or message_parent) and `session.thread_status_idle` (a child's run
 *    ended). Both carry `delivery_key`, so a delivery repeated after a crash
 *    is recognised and taken in once.
 */
import * as z from 'zod';
import { TextBlock, Usage } from './common.js';

/** A delivery's key: `run:<child run id>` for the report of a child's run, `msg:<tool use id>` for a message_parent. */
export const DeliveryKey = z.string().regex(/^(run|msg):[A-Za-z0-9_-]{1,128}$/, 'expected run:<run id> or msg:<tool use id>');

/** Token usage and cost of a session and everything below it, as a report carries it. */
export const TreeUsage = Usage;
export type TreeUsage = z.infer<typeof TreeUsage>;

export const ThreadCreatedFields = {
  session_thread_id: z.string().min(1),
  agent_name: z.string().min(1),
  workflow_run_id: z.string().nullable().default(null),
  /** Ours: the child's depth (the parent's + 1) and title. */
  depth: z.number().int().positive().optional(),
  title: z.string().nullish(),
};

/**
 * Why spawn_session refused a child for a limit (docs/delegation.md): one of
 * the agent.yaml limits, or `interrupted` (this session or one above it was
 * interrupted after the run began).
 */
export const SPAWN_REFUSAL_REASONS = ['max_spawn_depth', 'max_children', 'max_tree_sessions', 'max_spawns_per_minute', 'interrupted'] as const;
export type SpawnRefusalReason = (typeof SPAWN_REFUSAL_REASONS)[number];

/** Ours: `session.spawn_refused`, written by the run whose spawn_session was refused, before the tool's error result. */
export const SpawnRefusedFields = {
  reason: z.enum(SPAWN_REFUSAL_REASONS),
  /** The agent the child would have run. */
  agent_name: z.string().min(1),
  /** What the model was told (the tool's error result). */
  message: z.string(),
};

/** What session.json keeps of a session's refused spawns: how many, and the latest. */
export const SpawnRefusals = z.object({
  count: z.number().int().nonnegative(),
  last: z.object({ reason: z.enum(SPAWN_REFUSAL_REASONS), message: z.string(), at: z.string() }).nullable(),
});
export type SpawnRefusals = z.infer<typeof SpawnRefusals>;

export const ThreadMessageSentFields = {
  to_session_thread_id: z.string().min(1),
  to_agent_name: z.string().nullish(),
  content: z.array(TextBlock),
};

export const ThreadMessageReceivedFields = {
  from_session_thread_id: z.string().min(1),
  from_agent_name: z.string().nullish(),
  content: z.array(TextBlock),
  delivery_key: DeliveryKey,
};

export const StopReasonShape = z.discriminatedUnion('type', [
  z.object({ type: z.literal('end_turn') }),
  z.object({ type: z.literal('requires_action'), event_ids: z.array(z.string()) }),
  z.object({ type: z.literal('retries_exhausted') }),
  z.object({ type: z.literal('budget_reached') }),
  z.object({ type: z.literal('refusal') }),
]);

export const ThreadStatusIdleFields = {
  session_thread_id: z.string().min(1),
  agent_name: z.string().min(1),
  stop_reason: StopReasonShape,
  stop_details: z.object({ type: z.literal('refusal'), category: z.string().nullable(), explanation: z.string().nullable() }).nullable().default(null),
  delivery_key: DeliveryKey,
  /** The child's usage and cost with all its descendants, when its run ended. */
  tree_usage: TreeUsage.optional(),
};

/** What the parent's fold keeps about one child. */
export const ChildRecord = z.object({
  agent: z.string(),
  title: z.string().nullable(),
  depth: z.number().int().positive().nullable(),
  created_at: z.string(),
  /** running: spawned or written to, no report since; otherwise the stop reason of its last reported run. */
  status: z.string(),
  /** The run id of the latest report taken in (reports of older runs are repeats). */
  last_report_run: z.string().nullable(),
  tree_usage: TreeUsage.nullable(),
});
export type ChildRecord = z.infer<typeof ChildRecord>;

/** Event types a child (or the runtime on its behalf) appends to its parent's log from outside the parent's runs. */
export const CHILD_INGRESS_TYPES = ['agent.thread_message_received', 'session.thread_status_idle'] as const;
