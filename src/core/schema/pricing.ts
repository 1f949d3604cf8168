/**
 * Prices of model tokens (docs/delegation.md, "Usage and cost"): USD per
 * million tokens of each kind a Messages API reply counts. The defaults are
 * data/pricing.json (PriceTable); an agent overrides or adds models in
 * agent.yaml `pricing` (Pricing). Costs are recorded where the usage is:
 * `cost_usd` on span.model_request_end, span.outcome_evaluation_end and
 * agent.thread_context_compacted, summed into session.json `usage.cost_usd`.
 */
import * as z from 'zod';

const perMillion = z.number().nonnegative().finite();

/** One model's prices, USD per million tokens. */
export const ModelPrice = z.strictObject({
  /** Uncached input tokens. */
  input: perMillion,
  output: perMillion,
  /** Tokens written to the prompt cache (the 5-minute cache's rate). */
  cache_write: perMillion,
  /** Tokens read from the prompt cache. */
  cache_read: perMillion,
});
export type ModelPrice = z.infer<typeof ModelPrice>;

/** agent.yaml `pricing`: prices by model id, over the defaults. */
export const Pricing = z.record(z.string().min(1), ModelPrice);
export type Pricing = z.infer<typeof Pricing>;

/** data/pricing.json: the default prices. */
export const PriceTable = z.strictObject({
  about: z.string().default(''),
  as_of: z.string().default(''),
  models: Pricing,
});
export type PriceTable = z.infer<typeof PriceTable>;

/**
 * Rounds to a billionth of a dollar. Every recorded cost and every sum of
 * them is rounded so, which keeps sums free of floating-point tails
 * (0.30000000000000004) and the same whichever reader adds them.
 */
export function roundUsd(x: number): number {
  return Math.round(x * 1e9) / 1e9;
}
