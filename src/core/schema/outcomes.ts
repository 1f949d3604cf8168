/**
 * Outcomes (docs/outcomes.md): what "done" means for a session, and how the
 * runtime grades the work against it. The shapes here are the truth for
 * the outcome fields of `user.define_outcome`, the grader's one tool
 * (`grade_outcome`), and the outcome state session.json folds from the log.
 *
 * A `user.define_outcome` line may be written by hand, so its fields accept
 * shorthand and are normalised on read:
 *  - `rubric`: `{type: "text", content}` or a plain string;
 *  - `check`: `{command}`, a command as a string, or `"auto"` (run
 *    /workspace/check.sh when it exists);
 *  - `max_iterations`: 1 to 20, default 3.
 */
import * as z from 'zod';

/** Evaluations an outcome gets when its definition does not say. */
export const DEFAULT_MAX_ITERATIONS = 3;
/** The most evaluations an outcome may ask for (Managed Agents' bound). */
export const MAX_ITERATIONS = 20;
/** The longest rubric accepted, in characters (Managed Agents' bound). */
export const MAX_RUBRIC_CHARS = 262_144;
/** Workspace files an outcome may list for the rubric grader. */
export const MAX_OUTCOME_FILES = 20;
/** The longest description, check command and listed path accepted (characters). */
export const MAX_DESCRIPTION_CHARS = 16_384;
export const MAX_CHECK_CHARS = 16_384;
export const MAX_PATH_CHARS = 4096;
/** The script run by `check: auto`. */
export const AUTO_CHECK_PATH = '/workspace/check.sh';

export const Rubric = z
  .union(
    [
      z.string().refine((r) => r.trim() !== '', 'expected a rubric, not blank text'),
      z.object({ type: z.literal('text'), content: z.string().refine((r) => r.trim() !== '', 'expected a rubric, not blank text') }),
    ],
    { error: 'expected a rubric: {type: "text", content} or a plain string' },
  )
  .transform((r) => (typeof r === 'string' ? { type: 'text' as const, content: r } : r))
  .refine((r) => r.content.length <= MAX_RUBRIC_CHARS, `expected a rubric of at most ${MAX_RUBRIC_CHARS} characters`);
export type Rubric = z.output<typeof Rubric>;

/** A check as the runtime runs it: a command, or /workspace/check.sh when it exists (auto). */
export type OutcomeCheck = { command: string } | { auto: true };

/** Text with something in it: a blank check would pass without checking anything. */
const Command = z
  .string()
  .max(MAX_CHECK_CHARS, `expected a command of at most ${MAX_CHECK_CHARS} characters`)
  .refine((c) => c.trim() !== '', 'expected a command, not blank text');

export const Check = z
  .union(
    [
      Command,
      z.object({ command: Command }),
      z.object({ auto: z.literal(true) }),
    ],
    { error: 'expected a check: a shell command, "auto", or {command}' },
  )
  .transform((c): OutcomeCheck => (typeof c === 'string' ? (c.trim() === 'auto' ? { auto: true } : { command: c }) : c));

const WorkspacePath = z
  .string()
  .min(1)
  .max(MAX_PATH_CHARS)
  .refine((p) => !p.includes('\0'), 'expected a path without NUL');

/** The outcome fields of a user.define_outcome line (the envelope is the event's). */
export const OutcomeFields = {
  description: z
    .string()
    .max(MAX_DESCRIPTION_CHARS, `expected a description of at most ${MAX_DESCRIPTION_CHARS} characters`)
    .refine((d) => d.trim() !== '', 'expected a description, not blank text'),
  rubric: Rubric.optional(),
  max_iterations: z.number().int().min(1).max(MAX_ITERATIONS).nullish(),
  /** Our own: a shell command whose exit 0 means the outcome is met (or "auto"). */
  check: Check.optional(),
  /** Our own: workspace files the rubric grader reads (bounded), besides the agent's final message. */
  files: z.array(WorkspacePath).max(MAX_OUTCOME_FILES).optional(),
  /** Assigned by the runtime from the event id (outcomeIdOf); a line may carry it only with that value. */
  outcome_id: z.string().optional(),
};

/**
 * The outcome id of a user.define_outcome event: derived from the event's
 * id, so every reader and every replay of the log gives the same one.
 */
export function outcomeIdOf(eventId: string): string {
  return `outc_${eventId.startsWith('sevt_') ? eventId.slice(5) : eventId}`;
}

export const FINAL_RESULTS = ['satisfied', 'needs_revision', 'max_iterations_reached', 'failed', 'interrupted'] as const;
export const EvaluationResult = z.enum(FINAL_RESULTS);
export type EvaluationResult = z.infer<typeof EvaluationResult>;

/** What a grader may answer (max_iterations_reached and interrupted are the runtime's). */
export const GraderVerdict = z.enum(['satisfied', 'needs_revision', 'failed']);
export type GraderVerdict = z.infer<typeof GraderVerdict>;

/** The input of `grade_outcome`, the rubric grader's one (forced) tool. */
export const GradeOutcomeInput = z.strictObject({
  result: GraderVerdict.describe('satisfied: every criterion is met. needs_revision: some criterion is not met and the agent can fix it. failed: the rubric does not fit the work product at all.'),
  explanation: z.string().min(1).describe('Why, criterion by criterion; for needs_revision, exactly what is missing or wrong, so the agent can fix it.'),
  criteria: z
    .array(
      z.strictObject({
        criterion: z.string().describe('The criterion, as the rubric states it.'),
        verdict: z.enum(['met', 'not_met', 'not_applicable']),
        note: z.string().optional().describe('What was seen.'),
      }),
    )
    .optional()
    .describe('One entry per criterion of the rubric.'),
});
export type GradeOutcomeInput = z.infer<typeof GradeOutcomeInput>;

/** One outcome in session.json's outcome_evaluations (Managed Agents' shape). */
export const OutcomeEvaluation = z.object({
  outcome_id: z.string(),
  description: z.string(),
  /** The evaluation in progress or last done (0-based). */
  iteration: z.number().int().nonnegative(),
  /** pending (not taken in yet), running (the agent works), evaluating, or the final result. */
  result: z.enum(['pending', 'running', 'evaluating', ...FINAL_RESULTS]),
  explanation: z.string().nullable(),
  completed_at: z.string().nullable(),
});
export type OutcomeEvaluation = z.infer<typeof OutcomeEvaluation>;

/** One evaluation of the open outcome, for runtime/outcome.json. */
export const IterationRecord = z.object({
  iteration: z.number().int().nonnegative(),
  result: EvaluationResult,
  explanation: z.string(),
  evaluation_start_id: z.string(),
  at: z.string(),
});

/**
 * An outcome's definition with where its loop stands, as the fold keeps it
 * in session.json: pending ones until a run takes them in, then the one
 * open outcome until its evaluation ends it.
 */
export const OpenOutcome = z.object({
  outcome_id: z.string(),
  event_id: z.string(),
  description: z.string(),
  rubric: z.string().nullable(),
  check: z.union([z.object({ command: z.string() }), z.object({ auto: z.literal(true) })]).nullable(),
  files: z.array(z.string()),
  max_iterations: z.number().int().min(1).max(MAX_ITERATIONS),
  /** running: the agent works on it; evaluating: an evaluation started and has not ended. */
  state: z.enum(['pending', 'running', 'evaluating']),
  /** The next evaluation's number, or the one in progress. */
  iteration: z.number().int().nonnegative(),
  /** The span.outcome_evaluation_start of the evaluation in progress. */
  evaluation_start_id: z.string().nullable(),
  /** The evaluations so far (at most MAX_ITERATIONS). */
  iterations: z.array(IterationRecord),
});
export type OpenOutcome = z.infer<typeof OpenOutcome>;
