/**
 * Pause and resume (docs/context.md, "Pause and resume"): a person holds a
 * session (`user.pause`) and lets it go again (`user.resume`). Both are our
 * own event types (Managed Agents has none); a run that a pause stopped
 * says so with `session.run_paused`, so the resume knows a turn was cut.
 *
 * The shapes here are the truth for those three events and for the
 * `paused` state session.json folds from the log.
 */
import * as z from 'zod';
import { Timestamp } from './common.js';

/** `user.pause`: hold the session; `reason` is for people (kept in the log, shown by status). */
export const PauseFields = { reason: z.string().nullish() };

/** `user.resume`: let it go again. */
export const ResumeFields = {};

/**
 * `session.run_paused`, written by the run a pause stopped, just before its
 * ending: `pause_event_id` is the user.pause it obeyed. The agent's turn was
 * cut there (what it took in, or its last tool results, still wait for the
 * model), so the resume is taken in by a run that finishes it.
 */
export const RunPausedFields = { pause_event_id: z.string().min(1) };

/** The user events that hold or release a session: applied where their line sits, not by a run. */
export const PAUSE_EVENT_TYPES = ['user.pause', 'user.resume'] as const;
export type PauseEventType = (typeof PAUSE_EVENT_TYPES)[number];

export function isPauseEventType(t: string): t is PauseEventType {
  return (PAUSE_EVENT_TYPES as readonly string[]).includes(t);
}

/** session.json `paused`: null when the session may run. */
export const PauseState = z.object({
  /** The user.pause that holds the session (the first, when several came). */
  event_id: z.string(),
  since: Timestamp,
  reason: z.string().nullable(),
  /** The run this pause stopped mid-turn (session.run_paused), or null: the resume then needs a run. */
  cut_run: z.string().nullable().default(null),
});
export type PauseState = z.infer<typeof PauseState>;
