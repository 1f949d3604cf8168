/**
 * What a model request costs (docs/delegation.md, "Usage and cost"): its
 * usage times its model's price. The price comes from the agent's
 * `pricing` (agent.yaml) when it names the model, else from the defaults in
 * data/pricing.json; a model in neither costs 0, and runtime/usage.json
 * says so (usage-file.ts), once per run rather than on every request.
 *
 * A model id matches a price by its exact name first, then without a
 * trailing date (`claude-haiku-4-5-20251001` takes `claude-haiku-4-5`'s,
 * `gpt-4o-2024-08-06` takes `gpt-4o`'s).
 *
 * The defaults file is found by walking up from this module to the openboa
 * package (this module sits at a different depth under src/, dist/ and the
 * bundled binary's chunks), read once. If it cannot be read the defaults are
 * empty (every model unpriced unless agent.yaml prices it) and `problem`
 * says why: a run never stops for want of a price.
 */
import fs from 'node:fs';
import path from 'node:path';
import { PriceTable, roundUsd, type ModelPrice, type ModelUsage, type Pricing } from '../schema/index.js';

/** The default price table and, when it could not be read, why. */
export interface DefaultPrices {
  table: PriceTable;
  /** Where it was read from (null when no file was found). */
  file: string | null;
  problem: string | null;
}

/** Where a price came from: agent.yaml, the defaults, or nowhere (the model costs 0). */
export type PriceSource = 'agent.yaml' | 'default' | 'unknown';

export interface ResolvedPrice {
  price: ModelPrice;
  source: PriceSource;
}

const FREE: ModelPrice = Object.freeze({ input: 0, output: 0, cache_write: 0, cache_read: 0 });
/** A trailing date: Anthropic's -20251001 (or @20251001), OpenAI's -2024-08-06. */
const DATED = /(?:[-@]\d{8}|-\d{4}-\d{2}-\d{2})$/;

/** The folder of the openboa package at or above `from`, or null. */
function packageRoot(from: string): string | null {
  for (let dir = from; ; dir = path.dirname(dir)) {
    try {
      const pkg: unknown = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
      if (typeof pkg === 'object' && pkg !== null && (pkg as { name?: unknown }).name === 'openboa') return dir;
    } catch {
      // none here (or not JSON): look one level up
    }
    if (path.dirname(dir) === dir) return null;
  }
}

/** Reads and checks a price table file; a problem names it by its last two path parts (no host path). */
export function readPriceTable(file: string): DefaultPrices {
  const name = path.join(path.basename(path.dirname(file)), path.basename(file));
  try {
    const r = PriceTable.safeParse(JSON.parse(fs.readFileSync(file, 'utf8')));
    if (r.success) return { table: r.data, file, problem: null };
    const first = r.error.issues[0];
    return { table: { about: '', as_of: '', models: {} }, file, problem: `${name}: ${first ? `${first.path.join('.') || '(top)'}: ${first.message}` : 'invalid'}` };
  } catch (e) {
    return { table: { about: '', as_of: '', models: {} }, file, problem: `${name}: ${(e as Error).message.replaceAll(file, name)}` };
  }
}

let defaults: DefaultPrices | null = null;

/** The default prices (data/pricing.json of this package), read once. */
export function defaultPrices(): DefaultPrices {
  if (!defaults) {
    const root = packageRoot(import.meta.dirname);
    defaults = root ? readPriceTable(path.join(root, 'data', 'pricing.json')) : { table: { about: '', as_of: '', models: {} }, file: null, problem: 'data/pricing.json: no openboa package above this module' };
  }
  return defaults;
}

function lookup(table: Pricing, model: string): ModelPrice | undefined {
  if (Object.hasOwn(table, model)) return table[model];
  const alias = model.replace(DATED, '');
  return alias !== model && Object.hasOwn(table, alias) ? table[alias] : undefined;
}

/** The price of `model`: the agent's own first, then the default; unknown models are free. */
export function priceOf(agentPricing: Pricing, model: string): ResolvedPrice {
  const own = lookup(agentPricing, model);
  if (own) return { price: own, source: 'agent.yaml' };
  const d = lookup(defaultPrices().table.models, model);
  return d ? { price: d, source: 'default' } : { price: FREE, source: 'unknown' };
}

/** USD for `usage` at `price`, rounded to a billionth of a dollar. */
export function costOf(price: ModelPrice, usage: ModelUsage): number {
  const perMillion = usage.input_tokens * price.input + usage.output_tokens * price.output + usage.cache_creation_input_tokens * price.cache_write + usage.cache_read_input_tokens * price.cache_read;
  return roundUsd(perMillion / 1_000_000);
}

/** What requests to `model` with this usage cost, at the agent's prices. */
export function requestCost(def: { pricing: Pricing }, model: string, usage: ModelUsage): number {
  return costOf(priceOf(def.pricing, model).price, usage);
}
