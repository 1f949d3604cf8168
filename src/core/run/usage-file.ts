/**
 * runtime/usage.json (docs/delegation.md, "Usage and cost"): after each run,
 * the session's usage and cost, its tree's, and the prices its requests are
 * costed at, one entry per model the agent may ask (its model, its
 * fallback_model, its grader_model) with where each price came from.
 *
 * A model with no price (neither agent.yaml `pricing` nor data/pricing.json
 * names it) costs 0: this file says so in `note`, once, instead of every
 * span saying it. A cache like every runtime/ file: rebuilt from the log
 * (usage) and the definitions (prices) at the next run.
 */
import { defaultPrices, priceOf } from '../definitions/pricing.js';
import type { AgentDefinition } from '../schema/index.js';
import type { AfterRunHook } from './loop-hooks.js';
import { graderModel } from './graders.js';

/** The models an agent's requests may go to, in the order they are tried. */
export function agentModels(def: AgentDefinition): string[] {
  return [...new Set([def.model, ...(def.fallback_model ? [def.fallback_model] : []), graderModel(def)])];
}

/** The prices the agent's models are costed at, and the note naming those that cost 0. */
export function pricesOf(def: AgentDefinition) {
  const prices = Object.fromEntries(agentModels(def).map((m) => {
    const r = priceOf(def.pricing, m);
    return [m, { ...r.price, source: r.source }];
  }));
  const unknown = Object.entries(prices).flatMap(([m, p]) => (p.source === 'unknown' ? [m] : []));
  const d = defaultPrices();
  return {
    prices,
    defaults: { as_of: d.table.as_of, ...(d.problem ? { problem: `the default price table could not be read: ${d.problem}` } : {}) },
    note: unknown.length ? `no price for ${unknown.join(', ')} (neither agent.yaml pricing nor the default table names it): its requests are recorded at cost 0` : null,
  };
}

/** Rewrites runtime/usage.json after the run; the ending is left as it is. */
export function usageFile(): AfterRunHook {
  return {
    afterRun(ctx, _journal, ending, snap) {
      ctx.files.json('usage.json', { usage: snap.usage, tree_usage: snap.tree_usage, ...pricesOf(ctx.agent.def) });
      return ending;
    },
  };
}
