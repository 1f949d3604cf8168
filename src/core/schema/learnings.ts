/**
 * Learnings (docs/memory.md, "Learnings"): the input of the built-in `learn`
 * tool and the lines of `agents/<id>/learnings.jsonl`, the agent's journal of
 * what it learned. The journal is append-only: a learning is one line, and a
 * person retires one with another line, never an edit.
 */
import * as z from 'zod';
import { Timestamp } from './common.js';

export const LEARNING_KINDS = ['lesson', 'correction', 'error'] as const;
export const LearningKind = z.enum(LEARNING_KINDS);
export type LearningKind = z.infer<typeof LearningKind>;

/** The longest text one learning keeps (longer text is cut, with a mark). */
export const LEARNING_TEXT_MAX = 1000;
/** Tags of one learning, and the length of each. */
export const LEARNING_TAGS_MAX = 8;
export const LEARNING_TAG_MAX = 40;

/** Learning ids: `lrn_` and 32 hex digits (sorted by time like event ids). */
export const LEARNING_ID = /^lrn_[0-9a-f]{32}$/;

/** A stored tag: lower-case letters, digits, `.`, `_`, `-` (learningTags makes one of what the agent gave). */
export const LEARNING_TAG = /^[a-z0-9][a-z0-9._-]{0,39}$/;

/** As the agent gives it; stored as LEARNING_TAG says. */
const tag = z.string().min(1).max(LEARNING_TAG_MAX);
const storedTag = z.string().regex(LEARNING_TAG, 'expected lower-case letters, digits, ".", "_" or "-", at most 40');

/**
 * Who wrote a learning: `person` for a correction the runtime made from a
 * person's deny message, `agent` for what the learn tool recorded (lines
 * from before this field are the agent's). The prompt says which is which,
 * so an agent cannot pose as a person.
 */
export const LearningSource = z.enum(['person', 'agent']);
export type LearningSource = z.infer<typeof LearningSource>;

export const LearnInput = z.strictObject({
  kind: LearningKind.describe('lesson: something that worked or that you will do differently; correction: a person told you otherwise; error: a mistake not to repeat.'),
  text: z.string().trim().min(1).max(4000).describe('The learning itself, one or two sentences that will still make sense in another session (no secrets).'),
  tags: z.array(tag).max(LEARNING_TAGS_MAX).optional().describe('A few short words to group it by (e.g. "git", "tests").'),
});
export type LearnInput = z.infer<typeof LearnInput>;

/** One learning: who learned it where, and when. */
export const LearningEntry = z.strictObject({
  id: z.string().regex(LEARNING_ID, 'expected lrn_ and 32 hex digits'),
  kind: LearningKind,
  text: z.string().min(1).max(LEARNING_TEXT_MAX + 50),
  tags: z.array(storedTag).max(LEARNING_TAGS_MAX).default([]),
  source: LearningSource.default('agent'),
  session_id: z.string().min(1),
  /** The event it comes from: the `learn` tool use, or the denying user.tool_confirmation (a correction made by itself). */
  event_id: z.string().min(1),
  /** The run that recorded it. */
  wake_id: z.string().min(1).nullable(),
  at: Timestamp,
});
export type LearningEntry = z.infer<typeof LearningEntry>;

/** A person retired a learning (and every earlier one it merges with). */
export const LearningRetire = z.strictObject({
  type: z.literal('retire'),
  id: z.string().regex(LEARNING_ID, 'expected lrn_ and 32 hex digits'),
  at: Timestamp,
});
export type LearningRetire = z.infer<typeof LearningRetire>;

/** A line of learnings.jsonl: a retire line says `type: "retire"`; every other line is a learning. */
export type LearningLine = LearningEntry | LearningRetire;
