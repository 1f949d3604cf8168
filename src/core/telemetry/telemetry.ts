/**
 * The telemetry port (Deps.telemetry): where a run's spans and measurements
 * go. Absent (the default, and every CLI command): no observer is added to a
 * run, so a run without telemetry pays nothing for it. The daemon builds one
 * when it is asked to export traces (OTEL_EXPORTER_OTLP_ENDPOINT) or to serve
 * metrics (--metrics-listen): see src/daemon/telemetry-setup.ts and
 * docs/observability.md.
 *
 * The core depends on @opentelemetry/api alone: a Tracer is whatever the
 * embedder's SDK made; the metrics go to a sink with bounded labels (agent,
 * model, provider, tool, outcome), never a session id.
 */
import type { Tracer } from '@opentelemetry/api';
import type { ModelUsage } from '../schema/index.js';
import type { RunObserver } from '../run/loop-hooks.js';
import { runTracer } from './run-tracer.js';
import { runMetrics } from './run-metrics.js';

/** How a run ended, as a metric label: a short, fixed list. */
export type RunOutcomeLabel = 'end_turn' | 'requires_action' | 'refusal' | 'error' | 'interrupted' | 'rescheduled' | 'lease_lost';

/**
 * What the runs report to the metrics (src/daemon/metrics.ts implements it
 * with prom-client). Every method must not throw and must be quick.
 */
export interface RunMetricsSink {
  runEnded(x: { agent: string; outcome: RunOutcomeLabel; seconds: number }): void;
  /** From the append of the oldest event a run takes in to the run's opening. */
  appendToRunning(seconds: number): void;
  /** `usage` null: the request failed. `costUsd` null: the model has no price (nothing is added to the cost). */
  modelRequest(x: { agent: string; provider: string; model: string; seconds: number; usage: ModelUsage | null; costUsd: number | null }): void;
  toolCall(x: { tool: string; result: 'ok' | 'error' }): void;
  /** A failed attempt that will be retried (a session.error whose retry_status is retrying). */
  retry(x: { agent: string }): void;
  /** A run that recovers one cut short (its holder died and its lease was taken over). */
  leaseTakeover(): void;
  /** The agent crossed 80 % of its daily budget (spend-budget.ts). */
  budgetWarning(x: { agent: string }): void;
}

export interface Telemetry {
  /** Spans go to this tracer; null: no tracing. */
  tracer: Tracer | null;
  /** Message contents on spans (opted in: OPENBOA_OTEL_CAPTURE_CONTENT=true), redacted with the run's Redactor. */
  captureContent: boolean;
  metrics: RunMetricsSink | null;
}

/** The observers a run gets from the telemetry port ([] without one). */
export function telemetryObservers(t: Telemetry | undefined): RunObserver[] {
  if (!t) return [];
  return [...(t.tracer ? [runTracer(t.tracer, { captureContent: t.captureContent })] : []), ...(t.metrics ? [runMetrics(t.metrics)] : [])];
}
