/**
 * Delegation's roster and tools (docs/delegation.md, "The tools"): which
 * agents an agent may hand work to (agent.yaml `delegates`), and the inputs
 * of the four delegation tools. A parent (an agent with a roster) is offered
 * spawn_session, send_to_session and list_sessions; a child (a session with
 * a parent) is offered message_parent.
 */
import * as z from 'zod';
import { DefinitionId } from './common.js';

/** agent.yaml `delegates`: the agent ids this agent may spawn (`self` names the agent itself), or `self` alone. */
export const Roster = z.union([z.literal('self'), z.array(DefinitionId).min(1, 'expected at least one agent id, or leave delegates out')]);
export type Roster = z.infer<typeof Roster>;

/** Default agent.yaml `limits.max_spawn_depth`: how deep below its root a session may spawn. */
export const DEFAULT_MAX_SPAWN_DEPTH = 10;
/** Default agent.yaml `limits.max_children`: children one session may spawn. */
export const DEFAULT_MAX_CHILDREN = 25;
/**
 * Default agent.yaml `limits.max_tree_sessions`: sessions one tree may hold,
 * its root included. A tree that spawns without end (an agent that
 * delegates to itself and fans out on every run) stops at a few dozen.
 */
export const DEFAULT_MAX_TREE_SESSIONS = 50;
/**
 * Default agent.yaml `limits.max_spawns_per_minute`: children spawned in one
 * tree in any 60 s; above max_children, so one session may fan out to its
 * limit at once.
 */
export const DEFAULT_MAX_SPAWNS_PER_MINUTE = 30;
/**
 * The most max_tree_sessions may allow: the interrupt's cascade reads at
 * most this many sessions (delegation-cascade.ts, MAX_WALK_SESSIONS), so a
 * tree within its limit can always be stopped whole.
 */
export const MAX_TREE_SESSIONS_LIMIT = 2_000;

/** The longest message the parent writes to a child (characters). */
export const MAX_CHILD_MESSAGE_CHARS = 100_000;
/** The longest message_parent (characters). */
export const MAX_PARENT_MESSAGE_CHARS = 16_384;

const message = (max: number, what: string) =>
  z
    .string()
    .max(max)
    .refine((t) => t.trim() !== '', 'expected non-empty text')
    .describe(what);

export const SpawnSessionInput = z.strictObject({
  agent: DefinitionId.describe('The agent to hand the work to: one of your delegates, as listed in this tool\'s description.'),
  message: message(MAX_CHILD_MESSAGE_CHARS, 'The task, in full: the child sees only this message, not your conversation.'),
  title: z.string().min(1).max(200).optional().describe('A short title for the child session.'),
});
export type SpawnSessionInput = z.infer<typeof SpawnSessionInput>;

export const SendToSessionInput = z.strictObject({
  session_id: z.string().min(1).describe('The id of one of your children (from spawn_session or list_sessions).'),
  message: message(MAX_CHILD_MESSAGE_CHARS, 'The follow-up; the child keeps its history and reads it as a new message.'),
});
export type SendToSessionInput = z.infer<typeof SendToSessionInput>;

export const ListSessionsInput = z.strictObject({});

export const MessageParentInput = z.strictObject({
  message: message(MAX_PARENT_MESSAGE_CHARS, 'What to tell the session that spawned you (at most 16384 characters).'),
});
export type MessageParentInput = z.infer<typeof MessageParentInput>;
