/**
 * session.json: the snapshot of a session, a fold of its two journals.
 *
 * It is a cache (SPEC invariant 2): it can always be rebuilt from
 * events.jsonl and wake-queue.jsonl. It records the byte offset and line count
 * each journal was folded through, so a reader continues the fold from there
 * instead of re-reading the log: the cost of a refresh is proportional to the
 * new bytes. `format` versions the shape; an older or unreadable file is
 * rebuilt, never migrated in place.
 */
import * as z from 'zod';
import { DefinitionId, Metadata, SessionId, Timestamp, Usage } from './common.js';
import { SessionOverrides, StopReason } from './events.js';
import { WakeSource } from './wake-queue.js';
import { Recurrence } from './recurrence.js';
import { OpenOutcome, OutcomeEvaluation } from './outcomes.js';
import { ChildRecord, SpawnRefusals, TreeUsage } from './delegation.js';
import { PauseState } from './pause.js';
import { ContextCut } from './context.js';
import { SESSION_FORMAT } from './format-constants.js';

/** The format of session.json (format-constants.ts). */
export { SESSION_FORMAT } from './format-constants.js';

export const SessionStatus = z.enum(['idle', 'running', 'rescheduling', 'terminated']);
export type SessionStatus = z.infer<typeof SessionStatus>;

export const JournalCursor = z.object({
  /** Byte offset just past the last complete line folded. */
  offset: z.number().int().nonnegative(),
  /** Number of complete lines folded (the next line is line + 1). */
  line: z.number().int().nonnegative(),
  /** The file's identity when it was folded; a different inode means the file was replaced. */
  ino: z.number().int().nonnegative().default(0),
});
export type JournalCursor = z.infer<typeof JournalCursor>;

export const PendingEvent = z.object({
  id: z.string(),
  type: z.string(),
  line: z.number().int().positive(),
  /**
   * For a line written without created_at: when the fold first read it. It is
   * pinned here (session.json), then in the session.status_running that takes
   * the event in (created_at_of), so every reader shows the same time.
   */
  read_at: Timestamp.optional(),
});
export type PendingEvent = z.infer<typeof PendingEvent>;

export const OpenToolUse = z.object({
  id: z.string(),
  name: z.string(),
  kind: z.enum(['tool', 'custom']),
  permission: z.enum(['allow', 'ask', 'deny']),
  line: z.number().int().positive(),
  wake_id: z.string().nullable(),
  /** The accepted user event that answers it (confirmation or custom result), once one arrived. */
  answered_by: z.string().nullable(),
  /** Set for an agent.mcp_tool_use: its server (its result is an agent.mcp_tool_result). */
  mcp_server_name: z.string().optional(),
});
export type OpenToolUse = z.infer<typeof OpenToolUse>;

export const Rejection = z.object({
  file: z.enum(['events.jsonl', 'wake-queue.jsonl']),
  line: z.number().int().positive(),
  event_id: z.string().nullable(),
  code: z.string(),
  message: z.string(),
});
export type Rejection = z.infer<typeof Rejection>;

export const PendingWake = z.object({
  id: z.string(),
  due_at: Timestamp,
  reason: z.string(),
  source: WakeSource,
  created_at: Timestamp,
  line: z.number().int().positive(),
  retry_of: z.string().nullable(),
  /** Retries so far of the revisit this one re-schedules (0 for an original). */
  attempt: z.number().int().nonnegative().default(0),
  /** due_at derived from delay_seconds at read time and not yet pinned in the journal. */
  provisional: z.boolean(),
  /**
   * A recurring revisit's rule; null for a one-shot. Such an entry stays
   * pending until cancelled, and its due_at is its next firing.
   */
  recurrence: Recurrence.nullable().default(null),
});
export type PendingWake = z.infer<typeof PendingWake>;


export const SessionSnapshot = z.object({
  format: z.literal(SESSION_FORMAT),
  id: SessionId,
  agent_id: DefinitionId,
  environment_id: DefinitionId,
  title: z.string().nullable(),
  parent_session_id: SessionId.nullable(),
  overrides: SessionOverrides,
  /** From session.created and the session.updated patches since (at most 16 pairs after each patch). */
  metadata: Metadata.default({}),
  created_at: Timestamp,
  updated_at: Timestamp,

  status: SessionStatus,
  stop_reason: StopReason.nullable(),
  /** The run now (or last) in progress; set while status is running. */
  running_wake_id: z.string().nullable(),
  last_wake_id: z.string().nullable(),
  /** When status is rescheduling: when the next attempt is due. */
  retry_at: Timestamp.nullable(),
  /** The run in progress took in a user.interrupt (so a recovery must finish it, not continue the turn). */
  interrupt_taken: z.boolean().default(false),
  /**
   * The last run took in a user.interrupt: its children's reports (those the
   * interrupt's cascade causes) stay pending without starting a run, until
   * other input does (docs/delegation.md, "Interrupts and budgets cascade").
   */
  reports_wait: z.boolean().default(false),
  /** Runs in a row that ended in an error or a reschedule; 0 after a clean stop. */
  consecutive_failures: z.number().int().nonnegative(),
  /**
   * Why the last run went wrong, in words: its latest session.error (not a
   * report of a bad line). Cleared by a run that ends cleanly (end_turn or
   * requires_action) without an error of its own.
   */
  last_error: z
    .object({
      type: z.string(),
      code: z.string().nullable(),
      message: z.string(),
      at: Timestamp,
      wake_id: z.string().nullable(),
      /** The error's retry status: `terminal` was never retried (a 401), `exhausted` was, until the run gave up; null in an older session.json. */
      retry: z.enum(['retrying', 'exhausted', 'terminal']).nullable().default(null),
    })
    .nullable()
    .default(null),
  /** session.errors written by the run in progress (or the last run). */
  run_errors: z.number().int().nonnegative().default(0),

  usage: Usage,

  /** User events no run has taken in yet, in log order. */
  pending_events: z.array(PendingEvent),
  /** Every user event on a line <= this one has been taken in by a run. */
  processed_through_line: z.number().int().nonnegative(),
  /** Tool uses with no result yet. */
  open_tool_uses: z.array(OpenToolUse),
  /** Bad lines and rejected events not yet reported with a session.error. */
  rejected: z.array(Rejection),
  /** "file:line" keys already reported by a session.error. */
  reported: z.array(z.string()),
  /**
   * Names of inbox/ files whose lines are in the log since the last run
   * opened (the `inbox` field of those lines). A file still in inbox/ under
   * one of these names was moved in just before a crash: it is removed, not
   * moved in again.
   */
  inbox_taken: z.array(z.string()).default([]),

  pending_wakes: z.array(PendingWake),
  /** Wakes a session.status_running took whose wake.consumed record is not in the queue yet. */
  wakes_taken: z.array(z.string()),
  wakes_consumed: z.number().int().nonnegative(),
  wakes_cancelled: z.number().int().nonnegative(),

  /** The outcome a run took in and no evaluation has ended (docs/outcomes.md), with its definition. */
  outcome: OpenOutcome.nullable().default(null),
  /** Outcomes defined and not yet taken in by a run, in log order. */
  pending_outcomes: z.array(OpenOutcome).default([]),
  /** How deep below its root this session is (0 for a root; docs/delegation.md). */
  depth: z.number().int().nonnegative().default(0),
  /** The tightest max_spawn_depth of its ancestors (null for a root): binds this session's spawns too. */
  tree_max_depth: z.number().int().nonnegative().nullable().default(null),
  /** The tightest max_tree_sessions and max_spawns_per_minute of its ancestors (null for a root). */
  tree_max_sessions: z.number().int().positive().nullable().default(null),
  tree_max_spawns_per_minute: z.number().int().nonnegative().nullable().default(null),
  /**
   * The newest user.interrupt's time, pending or taken in (null: none). A
   * descendant whose work was asked for before it does none of that work,
   * and no run that began before it spawns (docs/delegation.md).
   */
  last_interrupt_at: Timestamp.nullable().default(null),
  /**
   * When the work this session was last asked for was asked for: the newest
   * user.message or user.define_outcome, by its `mandate_at` (a parent's run
   * wrote it) or its created_at (null: never asked anything).
   */
  mandate_at: Timestamp.nullable().default(null),
  /** spawn_session refusals for a limit or an interrupt (session.spawn_refused): how many, and the latest. */
  spawn_refusals: SpawnRefusals.default({ count: 0, last: null }),
  /** This session's children, by session id, as its log tells of them (spawns and reports). */
  children: z.record(z.string(), ChildRecord).default({}),
  /** Keys of message_parent deliveries taken (the newest), so a repeated delivery is taken in once. */
  delivered_messages: z.array(z.string()).default([]),
  /** Derived at each fold: usage over this session and every descendant, as their latest reports tell. */
  tree_usage: TreeUsage.default({ input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, model_requests: 0, cost_usd: 0 }),
  /** One entry per outcome (the newest MAX_OUTCOMES_KEPT), as Managed Agents' session object has it. */
  outcome_evaluations: z.array(OutcomeEvaluation).default([]),

  /**
   * The latest compaction that shapes the conversation (docs/context.md):
   * where its line is, so a run whose window starts after it still reads it,
   * and, when it left turns out behind a summary, the line the kept turns
   * start at (`kept_from_line`): a run reads no further back than that.
   */
  compaction: z.object({ event_id: z.string(), line: z.number().int().positive(), offset: z.number().int().nonnegative(), kept_from_line: z.number().int().positive().optional() }).nullable().default(null),
  /** Context warnings given since that compaction (thresholds, shares of the window). */
  context_warned: z.array(z.number()).default([]),
  /** The latest session.context_warning with a `cut` since that compaction's summary (docs/context.md); null when none. */
  context_cut: z.object({ event_id: z.string(), at: Timestamp, ...ContextCut.shape }).nullable().default(null),
  /** Held by a user.pause (docs/context.md): no run starts until a user.resume; null otherwise. */
  paused: PauseState.nullable().default(null),
  /** When the session was archived (session.updated {archived: true}); null when it is in use. An archived session is never woken. */
  archived_at: z.string().nullable().default(null),

  journals: z.object({ events: JournalCursor, wake_queue: JournalCursor }),
  /**
   * The log's format (its first line's `format`, docs/format.md), as the fold
   * read it. Kept so a fold that continues from this file does not read the
   * first line again: that line changes only with the file (the cursor's
   * inode) or when the log was empty. Absent in files from before it: read then.
   */
  log_format: z.number().int().nonnegative().optional(),

  /** Derived at each fold, for people and programs reading this file: when the next revisit is due. */
  next_wake_at: Timestamp.nullable().default(null),
  /** Derived at each fold: bytes of an unfinished last line (no "\n" yet), not read yet. */
  held_back: z.object({ events: z.number().int().nonnegative(), wake_queue: z.number().int().nonnegative() }).default({ events: 0, wake_queue: 0 }),
  /** Derived at each fold: how much is waiting, at a glance. */
  counts: z
    .object({
      pending_events: z.number().int().nonnegative(),
      pending_wakes: z.number().int().nonnegative(),
      requires_action: z.number().int().nonnegative(),
      unreported_errors: z.number().int().nonnegative(),
    })
    .default({ pending_events: 0, pending_wakes: 0, requires_action: 0, unreported_errors: 0 }),
});
export type SessionSnapshot = z.infer<typeof SessionSnapshot>;
