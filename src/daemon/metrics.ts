/**
 * The daemon's metrics in the Prometheus text format (docs/observability.md
 * lists them), kept with prom-client: the runs report through the
 * RunMetricsSink port (core/telemetry/telemetry.ts); the home's sessions by
 * status and its pending revisits are read when scraped; the process's RSS
 * and event-loop lag are prom-client's default metrics.
 *
 * Labels are bounded: agent, provider, model, tool, outcome, result, token
 * type, session status. Never a session id.
 *
 * `scrape()` is what both servers answer with: `openboa daemon
 * --metrics-listen` (metrics-listener.ts) and the HTTP API, which mounts
 * `metricsHandler` at /metrics.
 */
import fs from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { RunMetricsSink } from '../core/telemetry/telemetry.js';
import type { SessionStore } from '../core/store/session-store.js';
import type { Clock } from '../core/foundation/clock.js';

/** How long a scrape's count of the home's sessions is reused: a home of 10,000 sessions is read in about a second. */
export const HOME_GAUGES_TTL_MS = 15_000;

export interface MetricsOptions {
  store: SessionStore;
  clock: Clock;
  /** The watcher's mode now: 'polling' after a fallback from native events. */
  watchMode?: () => string;
  /** Whether polling was asked for (then polling is no fallback). */
  pollAsked?: boolean;
  /** Spans dropped by the trace export (trace-export.ts). */
  droppedSpans?: () => number;
}

const SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];

export class DaemonMetrics implements RunMetricsSink {
  readonly registry = new Registry();
  private readonly runs = new Counter({ name: 'openboa_runs_total', help: 'Runs by how they ended', labelNames: ['agent', 'outcome'], registers: [this.registry] });
  private readonly runSeconds = new Histogram({ name: 'openboa_run_duration_seconds', help: 'Duration of a run, from its start to its ending', labelNames: ['agent'], buckets: SECONDS, registers: [this.registry] });
  private readonly appendToRunningSeconds = new Histogram({ name: 'openboa_append_to_running_seconds', help: 'From the append of the oldest event a run takes in to the run opening', buckets: [0.001, ...SECONDS], registers: [this.registry] });
  private readonly requestSeconds = new Histogram({ name: 'openboa_model_request_duration_seconds', help: 'Duration of a model request', labelNames: ['provider', 'model'], buckets: SECONDS, registers: [this.registry] });
  private readonly requests = new Counter({ name: 'openboa_model_requests_total', help: 'Model requests by result', labelNames: ['provider', 'model', 'result'], registers: [this.registry] });
  private readonly tokens = new Counter({ name: 'openboa_model_tokens_total', help: 'Tokens of model requests by type (input, output, cache_read, cache_write)', labelNames: ['provider', 'model', 'type'], registers: [this.registry] });
  private readonly cost = new Counter({ name: 'openboa_cost_usd_total', help: 'What model requests cost, USD, at the prices of agent.yaml or the default table', labelNames: ['agent', 'model'], registers: [this.registry] });
  private readonly unpriced = new Counter({ name: 'openboa_model_requests_unpriced_total', help: 'Model requests whose model has no price (not in openboa_cost_usd_total)', labelNames: ['agent', 'model'], registers: [this.registry] });
  private readonly tools = new Counter({ name: 'openboa_tool_calls_total', help: 'Tool calls that ran, by tool and result', labelNames: ['tool', 'result'], registers: [this.registry] });
  private readonly retries = new Counter({ name: 'openboa_retries_total', help: 'Failed attempts that will be retried', labelNames: ['agent'], registers: [this.registry] });
  private readonly takeovers = new Counter({ name: 'openboa_lease_takeovers_total', help: 'Runs that recovered a run cut short (its holder died, its lease was taken over)', registers: [this.registry] });
  private readonly budgetWarnings = new Counter({ name: 'openboa_budget_warnings_total', help: 'Agents crossing 80 % of their daily spend budget', labelNames: ['agent'], registers: [this.registry] });
  private home: { at: number; statuses: Map<string, number>; revisits: number } | null = null;

  constructor(private readonly o: MetricsOptions) {
    collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: 20 });
    const self = this;
    new Gauge({
      name: 'openboa_sessions',
      help: 'Sessions of the home by status (read at most every 15 s)',
      labelNames: ['status'],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const [status, n] of self.homeNow().statuses) this.set({ status }, n);
      },
    });
    new Gauge({
      name: 'openboa_pending_revisits',
      help: 'Revisits waiting in the sessions\' wake queues (read at most every 15 s)',
      registers: [this.registry],
      collect() {
        this.set(self.homeNow().revisits);
      },
    });
    new Counter({
      name: 'openboa_watcher_fallbacks_total',
      help: 'Times the watcher fell back from native events to polling',
      registers: [this.registry],
      collect() {
        this.reset();
        if (!o.pollAsked && o.watchMode?.() === 'polling') this.inc();
      },
    });
    new Counter({
      name: 'openboa_trace_spans_dropped_total',
      help: 'Spans dropped by the trace export: its queue was full, or the collector failed them',
      registers: [this.registry],
      collect() {
        this.reset();
        const n = o.droppedSpans?.() ?? 0;
        if (n > 0) this.inc(n);
      },
    });
  }

  runEnded(x: { agent: string; outcome: string; seconds: number }): void {
    this.runs.inc({ agent: x.agent, outcome: x.outcome });
    this.runSeconds.observe({ agent: x.agent }, x.seconds);
  }

  appendToRunning(seconds: number): void {
    this.appendToRunningSeconds.observe(seconds);
  }

  modelRequest(x: Parameters<RunMetricsSink['modelRequest']>[0]): void {
    const l = { provider: x.provider, model: x.model };
    this.requestSeconds.observe(l, x.seconds);
    this.requests.inc({ ...l, result: x.usage ? 'ok' : 'error' });
    if (!x.usage) return;
    this.tokens.inc({ ...l, type: 'input' }, x.usage.input_tokens);
    this.tokens.inc({ ...l, type: 'output' }, x.usage.output_tokens);
    this.tokens.inc({ ...l, type: 'cache_read' }, x.usage.cache_read_input_tokens);
    this.tokens.inc({ ...l, type: 'cache_write' }, x.usage.cache_creation_input_tokens);
    if (x.costUsd === null) this.unpriced.inc({ agent: x.agent, model: x.model });
    else this.cost.inc({ agent: x.agent, model: x.model }, x.costUsd);
  }

  toolCall(x: { tool: string; result: 'ok' | 'error' }): void {
    this.tools.inc(x);
  }

  retry(x: { agent: string }): void {
    this.retries.inc(x);
  }

  leaseTakeover(): void {
    this.takeovers.inc();
  }

  budgetWarning(x: { agent: string }): void {
    this.budgetWarnings.inc(x);
  }

  /** The text a scrape answers with, and its content type. */
  async scrape(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }

  /** A node:http handler answering GET /metrics (404 for any other path, 405 for another method): what the HTTP API mounts. */
  readonly metricsHandler = (req: IncomingMessage, res: ServerResponse): void => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: the metrics are at /metrics\n');
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain' }).end('method not allowed\n');
      return;
    }
    this.scrape().then(
      ({ contentType, body }) => res.writeHead(200, { 'content-type': contentType }).end(req.method === 'HEAD' ? undefined : body),
      (e: unknown) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`metrics failed: ${(e as Error).message}\n`),
    );
  };

  /** The home's sessions by status and its pending revisits, from each session.json (a cache of the fold; no fold here). */
  private homeNow(): { statuses: Map<string, number>; revisits: number } {
    const now = this.o.clock.now();
    if (this.home && now - this.home.at < HOME_GAUGES_TTL_MS) return this.home;
    const statuses = new Map<string, number>();
    let revisits = 0;
    for (const id of this.o.store.listIds()) {
      try {
        const j = JSON.parse(fs.readFileSync(this.o.store.paths(id).snapshot, 'utf8')) as { status?: unknown; pending_wakes?: unknown };
        const status = typeof j.status === 'string' ? j.status : 'unknown';
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
        if (Array.isArray(j.pending_wakes)) revisits += j.pending_wakes.length;
      } catch {
        statuses.set('unreadable', (statuses.get('unreadable') ?? 0) + 1);
      }
    }
    this.home = { at: now, statuses, revisits };
    return this.home;
  }
}
