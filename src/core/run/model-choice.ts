/**
 * Which model a run asks, and how (docs/context.md, "Fallback model and
 * thinking").
 *
 * The choice is made once per run, from the agent's definition and the
 * session's failed attempts in a row as the run found them
 * (consecutive_failures in session.json: a run that ends rescheduled adds
 * one, a run that ends idle resets it; store/fold.ts). When they reach
 * `fallback_after` and the agent names a `fallback_model`, every request of
 * the run goes to the fallback; the first run that ends well resets the
 * count, so the next one is back on `model`. Because the count lives in the
 * log, a restarted daemon makes the same choice.
 *
 * Every request's `span.model_request_start` names its model, and a
 * fallback request also the model it stands in for and the failures that
 * made the run use it, so the log says when and why the switch happened.
 */
import { thinkingBudget, type AgentDefinition, type NewEvent } from '../schema/index.js';
import type { ModelRequest } from '../model/provider.js';
import type { RunContext } from './run-context.js';

export interface ModelChoice {
  model: string;
  /** Set when `model` is the fallback: the main model and the failed attempts in a row. */
  fallback: { from: string; failures: number } | null;
}

/** The model of a run that starts after `failures` failed attempts in a row. */
export function chooseModel(def: AgentDefinition, failures: number): ModelChoice {
  const alt = def.fallback_model;
  if (alt && alt !== def.model && failures >= def.fallback_after) return { model: alt, fallback: { from: def.model, failures } };
  return { model: def.model, fallback: null };
}

/** The run's choice (a pure function of its context: the same for every request of the run). */
export function runModel(ctx: RunContext): ModelChoice {
  return chooseModel(ctx.agent.def, ctx.startSnapshot.consecutive_failures);
}

/**
 * What every request of the run asks besides its context: the model, the
 * output bound and the thinking budget. With thinking on, max_tokens is
 * limits.max_output_tokens plus the budget: the API counts thinking toward
 * max_tokens and wants the budget below it, and the reply keeps all of
 * max_output_tokens for its text and tool calls.
 */
export function requestSettings(ctx: RunContext): Pick<ModelRequest, 'model' | 'max_tokens' | 'thinking'> {
  const def = ctx.agent.def;
  const budget = thinkingBudget(def.thinking);
  const out = def.limits.max_output_tokens;
  return { model: runModel(ctx).model, ...(budget === null ? { max_tokens: out } : { max_tokens: out + budget, thinking: { budget_tokens: budget } }) };
}

/** The span that opens a request: its model, and the fallback note when it is the fallback. */
export function modelRequestStart(ctx: RunContext, req: Pick<ModelRequest, 'model'>): NewEvent {
  const choice = runModel(ctx);
  const fallback = choice.fallback && req.model === choice.model ? { fallback: choice.fallback } : {};
  return { type: 'span.model_request_start', model: req.model, ...fallback };
}
