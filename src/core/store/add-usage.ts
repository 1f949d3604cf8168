/**
 * Adding recorded usage to a session's: the one rule the fold and the kinds
 * that carry usage (an evaluation's grader, a compaction's summary) share.
 */
import { roundUsd, type ModelUsage, type SessionSnapshot } from '../schema/index.js';

/** Adds recorded usage, its requests and its cost (USD; absent on lines from before costs were recorded) to the session's. */
export function addUsage(s: SessionSnapshot, u: ModelUsage, requests: number, costUsd: number | undefined): void {
  s.usage.input_tokens += u.input_tokens;
  s.usage.output_tokens += u.output_tokens;
  s.usage.cache_creation_input_tokens += u.cache_creation_input_tokens;
  s.usage.cache_read_input_tokens += u.cache_read_input_tokens;
  s.usage.model_requests += requests;
  if (costUsd) s.usage.cost_usd = roundUsd(s.usage.cost_usd + costUsd);
}
