/**
 * Exporting runs' spans over OTLP/HTTP, when the standard variables ask for
 * it: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (the full URL), else
 * OTEL_EXPORTER_OTLP_ENDPOINT (+ /v1/traces). Off otherwise, and then the
 * SDK and the exporter are never loaded (dynamic import). OTEL_SDK_DISABLED=true
 * or OTEL_TRACES_EXPORTER=none turn it off. Headers, timeout, the queue and
 * the resource come from the standard variables of the environment given
 * (the daemon's), listed in docs/observability.md.
 *
 * A slow or dead collector never slows a run: ending a span only queues it;
 * the batch processor exports on its own timer; the queue is bounded
 * (OTEL_BSP_MAX_QUEUE_SIZE, default 2048 spans waiting to be exported) and a
 * span that finds it full is dropped and counted, as is every span of an
 * export that failed.
 */
import type { Tracer } from '@opentelemetry/api';

export interface TraceExport {
  tracer: Tracer;
  /** Spans dropped so far: the queue was full, or their export failed. */
  dropped(): number;
  /** Exports what is queued, waiting at most `graceMs` (default 3 s: a daemon's stop must not wait on a collector), then stops. Never throws. */
  shutdown(graceMs?: number): Promise<void>;
}

/** The traces URL the environment names, or null when tracing is off. */
export function tracesUrl(env: NodeJS.ProcessEnv): string | null {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return null;
  if (env.OTEL_TRACES_EXPORTER?.split(',').map((s) => s.trim()).includes('none')) return null;
  const own = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  if (own) return own;
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  return base ? `${base.replace(/\/+$/, '')}/v1/traces` : null;
}

const positive = (v: string | undefined, fallback: number): number => {
  const n = Number(v);
  return Number.isInteger(n) && n > 0 ? n : fallback;
};

export async function startTraceExport(env: NodeJS.ProcessEnv, version: string): Promise<TraceExport | null> {
  const url = tracesUrl(env);
  if (!url) return null;
  const [{ TracerProvider, BatchSpanProcessor }, { OTLPTraceExporter }, { resourceFromAttributes }] = await Promise.all([
    import('@opentelemetry/sdk-trace'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'),
  ]);
  type Exporter = import('@opentelemetry/sdk-trace').SpanExporter;
  type Processor = import('@opentelemetry/sdk-trace').SpanProcessor;
  const maxQueue = positive(env.OTEL_BSP_MAX_QUEUE_SIZE, 2048);
  let dropped = 0;
  /** Spans handed to the batch processor and not yet exported or failed. */
  let inFlight = 0;
  // Read from the daemon's environment as given (the exporter alone would read process.env).
  const otlp = new OTLPTraceExporter({
    url,
    headers: keyValues(env.OTEL_EXPORTER_OTLP_TRACES_HEADERS ?? env.OTEL_EXPORTER_OTLP_HEADERS),
    timeoutMillis: positive(env.OTEL_EXPORTER_OTLP_TRACES_TIMEOUT ?? env.OTEL_EXPORTER_OTLP_TIMEOUT, 10_000),
  });
  const exporter: Exporter = {
    export(spans, done) {
      otlp.export(spans, (r) => {
        inFlight -= spans.length;
        if (r.code !== 0) dropped += spans.length;
        done(r);
      });
    },
    shutdown: () => otlp.shutdown(),
    forceFlush: () => otlp.forceFlush(),
  };
  const batch = new BatchSpanProcessor({ exporter, maxQueueSize: maxQueue, scheduledDelayMillis: positive(env.OTEL_BSP_SCHEDULE_DELAY, 5000), exportTimeoutMillis: positive(env.OTEL_BSP_EXPORT_TIMEOUT, 30_000) });
  // The queue counts what waits for the collector as well as what is batched: a dead collector fills it, and the rest is dropped here, counted.
  const bounded: Processor = {
    onStart: (span, parent) => batch.onStart(span, parent),
    onEnd(span) {
      if (inFlight >= maxQueue) {
        dropped += 1;
        return;
      }
      inFlight += 1;
      batch.onEnd(span);
    },
    forceFlush: () => batch.forceFlush(),
    shutdown: () => batch.shutdown(),
  };
  const resource = resourceFromAttributes({ 'service.name': env.OTEL_SERVICE_NAME?.trim() || 'openboa', 'service.version': version, ...keyValues(env.OTEL_RESOURCE_ATTRIBUTES) });
  const provider = new TracerProvider({ resource, spanProcessors: [bounded] });
  return {
    tracer: provider.getTracer('openboa', version),
    dropped: () => dropped,
    // A collector that is gone at the end loses what was still queued, nothing more.
    async shutdown(graceMs = 3000) {
      let timer: NodeJS.Timeout | undefined;
      const grace = new Promise<void>((r) => (timer = setTimeout(r, graceMs).unref()));
      await Promise.race([provider.shutdown().catch(() => undefined), grace]);
      clearTimeout(timer);
    },
  };
}

/** OTEL_RESOURCE_ATTRIBUTES and OTEL_EXPORTER_OTLP_HEADERS: `key=value` pairs, comma-separated, values percent-encoded; a malformed pair is skipped. */
function keyValues(raw: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of raw?.split(',') ?? []) {
    const i = pair.indexOf('=');
    if (i <= 0) continue;
    try {
      out[pair.slice(0, i).trim()] = decodeURIComponent(pair.slice(i + 1).trim());
    } catch {
      // not percent-encoded properly: skipped
    }
  }
  return out;
}
