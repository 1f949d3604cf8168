/**
 * The daemon's telemetry, built once at start (docs/observability.md):
 * trace export when the OTEL_* variables ask for it (trace-export.ts),
 * metrics when --metrics-listen asks for them (metrics.ts,
 * metrics-listener.ts). Returns the port to put in Deps.telemetry (null:
 * neither, and runs carry no observer), the metrics for the HTTP API to
 * mount, and close() for the daemon's stop.
 */
import type { Telemetry } from '../core/telemetry/telemetry.js';
import type { SessionStore } from '../core/store/session-store.js';
import type { Clock } from '../core/foundation/clock.js';
import { startTraceExport } from './trace-export.js';
import { DaemonMetrics } from './metrics.js';
import { listenMetrics, type MetricsListener } from './metrics-listener.js';

export interface TelemetrySetup {
  telemetry: Telemetry | null;
  metrics: DaemonMetrics | null;
  listener: MetricsListener | null;
  /** Where traces go, for the banner; null when off. */
  tracesTo: string | null;
  /** Flushes the spans (bounded by the exporter's timeout) and stops listening; never throws. */
  close(): Promise<void>;
}

export interface TelemetryInput {
  env: NodeJS.ProcessEnv;
  store: SessionStore;
  clock: Clock;
  version: string;
  /** --metrics-listen, or undefined. */
  metricsListen?: string;
  /** Keep metrics without a listener of their own (the HTTP API serves them at /metrics). */
  metricsForApi?: boolean;
  /** Whether --poll was asked for (polling is then no fallback). */
  poll: boolean;
  /** The daemon's watcher mode, read at each scrape. */
  watchMode: () => string;
}

export async function setupTelemetry(x: TelemetryInput): Promise<TelemetrySetup> {
  const traces = await startTraceExport(x.env, x.version);
  const metrics = x.metricsListen !== undefined || x.metricsForApi === true ? new DaemonMetrics({ store: x.store, clock: x.clock, watchMode: x.watchMode, pollAsked: x.poll, ...(traces ? { droppedSpans: traces.dropped } : {}) }) : null;
  let listener: MetricsListener | null = null;
  try {
    if (x.metricsListen !== undefined && metrics) listener = await listenMetrics(x.metricsListen, metrics);
  } catch (e) {
    await traces?.shutdown().catch(() => undefined);
    throw e;
  }
  const captureContent = x.env.OPENBOA_OTEL_CAPTURE_CONTENT?.trim().toLowerCase() === 'true';
  return {
    telemetry: traces || metrics ? { tracer: traces?.tracer ?? null, captureContent, metrics } : null,
    metrics,
    listener,
    tracesTo: traces ? 'otlp' : null,
    async close() {
      await Promise.allSettled([listener?.close(), traces?.shutdown()]);
    },
  };
}
