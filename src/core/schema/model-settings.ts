/**
 * The model settings of agent.yaml beyond `model` (docs/context.md,
 * "Fallback model and thinking"), and what the log records about the model
 * each request used.
 *
 *  - `fallback_model` / `fallback_after`: after `fallback_after` failed
 *    attempts in a row (the session's consecutive_failures), the next
 *    attempt's requests go to `fallback_model`; a run that ends well resets
 *    the count, and the main model is back.
 *  - `thinking`: `off` (the default: no `thinking` parameter is sent), a
 *    named tier, or a budget in tokens. A request's max_tokens is
 *    limits.max_output_tokens plus the budget, so the reply keeps all of
 *    max_output_tokens for its text and tool calls.
 */
import * as z from 'zod';

/** The Messages API's smallest extended-thinking budget. */
export const MIN_THINKING_BUDGET = 1024;

/**
 * The budgets of the named tiers. With the default max_output_tokens
 * (8192), `high` asks for max_tokens 24576: within the output limit of
 * every model that thinks (the smallest, 32000).
 */
export const THINKING_TIERS = { low: 2048, medium: 8192, high: 16384 } as const;
export type ThinkingTier = keyof typeof THINKING_TIERS;

const EXPECTED_THINKING = `expected off, low, medium, high, or a whole number of budget tokens of at least ${MIN_THINKING_BUDGET}`;

/** One message whichever branch failed: a number below the minimum reads the same as a word that is no tier. */
export const ThinkingSetting = z.union([z.enum(['off', 'low', 'medium', 'high']), z.number().int(EXPECTED_THINKING).min(MIN_THINKING_BUDGET, EXPECTED_THINKING)], { error: EXPECTED_THINKING });
export type ThinkingSetting = z.infer<typeof ThinkingSetting>;

/** Failed attempts in a row before the fallback model is used, when agent.yaml does not say. */
export const DEFAULT_FALLBACK_AFTER = 2;

/** The fields these settings add to AgentDefinition (schema/definitions.ts). */
export const ModelSettingsFields = {
  /** A model id used after `fallback_after` failed attempts in a row; none: always `model`. */
  fallback_model: z.string().min(1).optional(),
  fallback_after: z.number().int().positive().default(DEFAULT_FALLBACK_AFTER),
  thinking: ThinkingSetting.default('off'),
};

/** The thinking budget of a setting in tokens; null for off. */
export function thinkingBudget(setting: ThinkingSetting): number | null {
  if (setting === 'off') return null;
  return typeof setting === 'number' ? setting : THINKING_TIERS[setting];
}

/**
 * Our extension fields of `span.model_request_start`: the model the request
 * went to, and, when it was the fallback, the model it stood in for and the
 * failed attempts in a row that made the run use it.
 */
export const ModelRequestStartFields = {
  model: z.string().optional(),
  fallback: z.object({ from: z.string(), failures: z.number().int().nonnegative() }).optional(),
};
