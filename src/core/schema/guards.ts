/**
 * Guards and escalation (docs/context.md, "Guards: failure detection" and
 * "Escalation"): agent.yaml `guards` and `escalation`, the input of the
 * built-in `escalate` tool, and the fields of `session.guard`, the record a
 * guard writes when it acts.
 */
import * as z from 'zod';

/** The guards, by the name agent.yaml and session.guard give them. */
export const GUARD_NAMES = ['premature_intent', 'stale_loop', 'duplicate_read'] as const;
export type GuardName = (typeof GUARD_NAMES)[number];

/**
 * What a guard did: `remind` (premature_intent) and `replan` (stale_loop)
 * are nudges the model sees as a user turn where they sit in the log;
 * `escalate` (stale_loop) paused the session on an `escalate` custom tool use
 * (`tool_use_id`). The duplicate_read guard writes no record of its own: its
 * warning and its refusal are in the read's result, which names the guard.
 */
export const GUARD_ACTIONS = ['remind', 'replan', 'escalate'] as const;
export type GuardAction = (typeof GUARD_ACTIONS)[number];

/** The actions whose message enters the conversation (as a user text block where the record sits). */
export const NUDGE_ACTIONS: ReadonlySet<string> = new Set<GuardAction>(['remind', 'replan']);

/** The payload of `session.guard` (the event itself is in events.ts). */
export const GuardEventFields = {
  guard: z.enum(GUARD_NAMES),
  action: z.enum(GUARD_ACTIONS),
  /** Why the guard acted; for a nudge, also what the model is told. */
  message: z.string(),
  /** The tool use it concerns: the escalation it made. */
  tool_use_id: z.string().optional(),
};

const count = z.number().int().nonnegative();

export const STALE_LOOP_DEFAULTS = { replan_at: 3, escalate_at: 6 };
export const DUPLICATE_READ_DEFAULTS = { warn_at: 2, stop_at: 3 };

/** `true` means the defaults, `false` turns the guard off; a threshold of 0 turns that step off. */
const switchable = <T extends z.ZodRawShape>(shape: T, defaults: { [K in keyof T]: number }) =>
  z
    .union([z.boolean(), z.strictObject(shape)])
    .default(defaults as never)
    .transform((v) => (v === true ? { ...defaults } : v === false ? false : { ...defaults, ...(v as object) }) as false | { [K in keyof T]: number });

export const GuardSettings = z.strictObject({
  /** Remind the model once when it says it will act and ends its turn without a tool call. */
  premature_intent: z.boolean().default(true),
  /** Text-only replies without progress: a replan nudge at `replan_at`, an escalation to a person at `escalate_at`. */
  stale_loop: switchable({ replan_at: count.optional(), escalate_at: count.optional() }, STALE_LOOP_DEFAULTS),
  /** The same file range read again in a run: a warning at the `warn_at`-th read, refused from the `stop_at`-th. */
  duplicate_read: switchable({ warn_at: count.optional(), stop_at: count.optional() }, DUPLICATE_READ_DEFAULTS),
});
export type GuardSettings = z.infer<typeof GuardSettings>;

export const EscalationSettings = z.strictObject({
  /** An escalation with a recommendation and a confidence above this resolves itself to it; null: always ask a person. */
  auto_resolve_above: z.number().min(0).max(1).nullable().default(null),
});
export type EscalationSettings = z.infer<typeof EscalationSettings>;

/** Options an escalation may offer. */
export const MAX_ESCALATION_OPTIONS = 10;

/** An option's text as a recommendation is compared in this form: case, runs of spaces and a trailing stop do not count. */
const optionKey = (s: string) => s.toLowerCase().replace(/\s+/g, ' ').replace(/[\s.!]+$/, '').trim();

/**
 * The recommended option's number (1-based) from what the model wrote: the
 * number itself, a numeral ("2", "option 2", "#2"), or an option's text
 * (compared as optionKey does); null when it names none of them.
 */
export function recommendedOption(options: readonly string[], given: number | string): number | null {
  if (typeof given === 'number') return Number.isInteger(given) && given >= 1 && given <= options.length ? given : null;
  const numeral = /^\s*(?:option\s*)?#?\s*(\d{1,3})\s*$/i.exec(given);
  if (numeral) return recommendedOption(options, Number(numeral[1]));
  const key = optionKey(given);
  const at = options.findIndex((o) => optionKey(o) === key);
  return at === -1 ? null : at + 1;
}

/**
 * The `escalate` tool's input. `recommendation` may be given as the option's
 * number or its text (models name options by text); it is always a number
 * once parsed. The log keeps what the model sent, and every reader parses it
 * with this schema, so all see the same number.
 */
export const EscalateInput = z
  .strictObject({
    situation: z.string().min(1).max(4000).describe('What you are stuck on or need a decision about, for a person who has not followed the session.'),
    options: z.array(z.string().min(1).max(1000)).min(2).max(MAX_ESCALATION_OPTIONS).describe('The choices you see, each a short sentence (at least 2).'),
    confidence: z.number().min(0).max(1).describe('How sure you are of your recommendation, 0 to 1.'),
    recommendation: z
      .union([z.number().int().min(1), z.string().min(1).max(1000)])
      .optional()
      .describe('The option you recommend: its number (1-based) or its exact text.'),
  })
  .transform((v, ctx): { situation: string; options: string[]; confidence: number; recommendation?: number } => {
    const { recommendation, ...rest } = v;
    if (recommendation === undefined) return rest;
    const n = recommendedOption(v.options, recommendation);
    if (n === null) {
      ctx.addIssue({
        code: 'custom',
        message: `expected the number of one of the options (1 to ${v.options.length}) or one option's exact text, got ${JSON.stringify(recommendation).slice(0, 200)}`,
        path: ['recommendation'],
      });
      return z.NEVER;
    }
    return { ...rest, recommendation: n };
  });
export type EscalateInput = z.infer<typeof EscalateInput>;
