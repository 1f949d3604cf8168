/**
 * A run's measurements, handed to the metrics sink (telemetry.ts): how it
 * ended and how long it took, append→running latency, each model request
 * (duration, tokens by type, cost when the model has a price), each tool
 * call by tool and result, retries, recovered runs and budget warnings.
 * Labels are the agent, provider, model, tool and outcome: bounded by the
 * home's definitions, never a session id. A RunObserver: writes nothing.
 */
import { priceOf, requestCost } from '../definitions/pricing.js';
import { toolUseView } from '../kinds/index.js';
import type { RunObserver } from '../run/loop-hooks.js';
import type { Ending } from '../run/run-context.js';
import type { RunMetricsSink, RunOutcomeLabel } from './telemetry.js';

/** The outcome label of a run's ending. */
export function outcomeLabel(ending: Ending): RunOutcomeLabel {
  switch (ending.kind) {
    case 'idle':
      if (ending.stop.type === 'end_turn' || ending.stop.type === 'requires_action' || ending.stop.type === 'refusal') return ending.stop.type;
      return 'error';
    case 'rescheduled':
      return ending.reason === 'shutdown' ? 'interrupted' : 'rescheduled';
    default:
      return ending.kind;
  }
}

export function runMetrics(sink: RunMetricsSink): RunObserver {
  let started = 0;
  return {
    runStart(ctx, plan) {
      started = ctx.rt.deps.clock.now();
      if (plan.recovery) sink.leaseTakeover();
      // The oldest event taken in, by when it was appended (the log window holds the run's input).
      const taken = new Set(plan.take.map((p) => p.id));
      let oldest = Infinity;
      for (const l of ctx.window.recent) if (taken.has(l.event.id)) oldest = Math.min(oldest, Date.parse(l.event.created_at));
      if (Number.isFinite(oldest)) sink.appendToRunning(Math.max(0, started - oldest) / 1000);
    },
    reply(ctx, req, outcome, ms) {
      const def = ctx.agent.def;
      const usage = 'response' in outcome ? outcome.response.usage : null;
      const priced = priceOf(def.pricing, req.model).source !== 'unknown';
      sink.modelRequest({ agent: ctx.agent.id, provider: def.provider, model: req.model, seconds: ms / 1000, usage, costUsd: usage && priced ? requestCost(def, req.model, usage) : null });
    },
    toolCall(_ctx, use, result) {
      sink.toolCall({ tool: toolUseView(use)?.name ?? 'unknown', result: result === null || result.isError ? 'error' : 'ok' });
    },
    events(ctx, events) {
      for (const e of events) {
        if (e.type !== 'session.error') continue;
        if (e.error.code === 'spend_budget_warning') sink.budgetWarning({ agent: ctx.agent.id });
        else if (e.error.retry_status?.type === 'retrying') sink.retry({ agent: ctx.agent.id });
      }
    },
    runEnd(ctx, ending) {
      sink.runEnded({ agent: ctx.agent.id, outcome: outcomeLabel(ending), seconds: (ctx.rt.deps.clock.now() - started) / 1000 });
    },
  };
}
