/**
 * The HTTP API of a home (docs/http.md): one more adapter over the store,
 * beside the CLI and the daemon. createApi() is the Hono app (testable with
 * app.request()); startApiServer() serves it on @hono/node-server and tells
 * the home's runs where it is (`<home>/.openboa/api.json`, for their run
 * tokens: core/run/api-access.ts).
 *
 * The inspector's static page is served at / (inspector-routes.ts) without
 * the key: it holds no data until a person gives the key to it.
 * Every route under /v1 needs the key or a run token (auth.ts); bodies are
 * capped (413); anything thrown is answered in the API's error envelope,
 * and an unknown route is a 404 in the same shape.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { serve, type ServerType } from '@hono/node-server';
import type { Runtime } from '../core/run/run-context.js';
import { apiEndpointFile } from '../core/run/api-access.js';
import { writeJsonAtomic } from '../core/store/atomic-file.js';
import { ApiError, apiErrorResponse } from './api-error.js';
import { requireAuth, type AuthEnv } from './auth.js';
import { eventRoutes } from './event-routes.js';
import { sessionRoutes } from './session-routes.js';
import { definitionRoutes } from './definition-routes.js';
import { runtimeRoutes } from './runtime-routes.js';
import { eventTailRoutes } from './event-tail.js';
import { overviewRoutes } from './overview-routes.js';
import { pauseRoutes } from './pause-routes.js';
import { searchRoutes } from './search-routes.js';
import { inspectorRoutes } from './inspector-routes.js';
import { StreamHub, type StreamLimits } from './stream-hub.js';
import { previewHub } from '../core/run/preview-hub.js';
import type { ListenAddress } from './listen-address.js';

/** Largest request body, bytes: a message with a few images (base64) fits; a runaway client does not. */
export const MAX_BODY_BYTES = 4 * 1024 * 1024;

export interface ApiOptions {
  /** The key requests must carry (api-key.ts). */
  apiKey: string;
  /** Called after events were appended to a session (default: nothing; a daemon in the process evaluates it). */
  onAppend?: (sessionId: string) => void;
  maxBodyBytes?: number;
  /** Period of `: ping` on a stream, ms (default stream-hub.ts PING_MS). */
  pingMs?: number;
  /** How many streams may be open at once (default stream-hub.ts STREAM_LIMITS). */
  streamLimits?: StreamLimits;
  /**
   * Runs happen in this process (a daemon beside the server, `openboa daemon
   * --listen`): streams serve `event_deltas` previews of them. Default
   * false (`openboa serve`): whole events only, and a stream that asks says so.
   */
  runsHere?: boolean;
  /** The daemon's metrics in this process (`daemon --listen`): served at /metrics to the key, in Prometheus text format. */
  metrics?: MetricsSource;
}

/** What answers a scrape (daemon/metrics.ts DaemonMetrics). */
export interface MetricsSource {
  scrape(): Promise<{ contentType: string; body: string }>;
}

export interface Api {
  app: Hono<AuthEnv>;
  hub: StreamHub;
}

export function createApi(rt: Runtime, o: ApiOptions): Api {
  const hub = new StreamHub(rt.store, rt.deps.clock, o.pingMs, o.runsHere ? previewHub : null, o.streamLimits);
  const deps = { rt, onAppend: o.onAppend ?? (() => {}) };
  const app = new Hono<AuthEnv>();
  const max = o.maxBodyBytes ?? MAX_BODY_BYTES;
  app.onError((e) => apiErrorResponse(e));
  app.notFound((c) => apiErrorResponse(new ApiError('not_found_error', `no route ${c.req.method} ${new URL(c.req.url).pathname}`, false)));
  app.use('/v1/*', requireAuth(rt, o.apiKey));
  // A run's token opens its own session and that session's children, nothing else: every route outside
  // /v1/sessions (agents, environments, and whatever comes later) is the key's alone. Deny by default.
  app.use('/v1/*', async (c, next) => {
    const p = new URL(c.req.url).pathname;
    if (c.get('principal').kind === 'run' && p !== '/v1/sessions' && !p.startsWith('/v1/sessions/')) {
      throw new ApiError('permission_error', 'a run token opens its own session and its children only', false);
    }
    await next();
  });
  app.use(
    '/v1/*',
    bodyLimit({
      maxSize: max,
      onError: () => {
        throw new ApiError('request_too_large', `the request body is larger than ${max} bytes`, false);
      },
    }),
  );
  app.route('/v1', sessionRoutes(deps));
  app.route('/v1', eventTailRoutes(rt));
  app.route('/v1', eventRoutes(deps, hub));
  app.route('/v1', definitionRoutes(rt));
  app.route('/v1', runtimeRoutes(rt));
  app.route('/v1', overviewRoutes(rt));
  app.route('/v1', pauseRoutes(deps));
  app.route('/v1', searchRoutes(rt));
  app.route('/', inspectorRoutes());
  // Prometheus scrapes with the key as a bearer token (scrape_config `authorization`); a run's token is refused.
  const metrics = o.metrics;
  if (metrics) {
    app.get('/metrics', requireAuth(rt, o.apiKey), async (c) => {
      if (c.get('principal').kind !== 'key') throw new ApiError('permission_error', 'metrics are for the key', false);
      const { contentType, body } = await metrics.scrape();
      return c.body(body, 200, { 'content-type': contentType });
    });
  }
  return { app, hub };
}

export interface RunningServer {
  /** The base URL clients pass to the SDK (`baseURL`). */
  url: string;
  api: Api;
  /** Stops listening, ends every stream, and removes api.json if it is still this server's. */
  close(): Promise<void>;
}

/** Serves the API on `at` (port 0: any free port) until close(). */
export async function startApiServer(rt: Runtime, at: ListenAddress, o: ApiOptions): Promise<RunningServer> {
  const api = createApi(rt, o);
  const server = await new Promise<ServerType>((resolve, reject) => {
    const s = serve({ fetch: api.app.fetch, hostname: at.host, port: at.port }, () => resolve(s));
    s.once('error', reject);
  });
  const addr = server.address() as AddressInfo;
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  const url = `http://${host}:${addr.port}`;
  // The egress proxy and web_fetch never reach this port on this machine's addresses, even where an environment lists one.
  rt.deps.network.ownPorts.add(addr.port);
  const file = apiEndpointFile(rt.home);
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  writeJsonAtomic(file, { url, pid: process.pid }, { durable: false });
  let closed: Promise<void> | null = null;
  return {
    url,
    api,
    close: () =>
      (closed ??= (async () => {
        api.hub.closeAll();
        rt.deps.network.ownPorts.delete(addr.port);
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          (server as { closeAllConnections?: () => void }).closeAllConnections?.();
        });
        try {
          const rec = JSON.parse(fs.readFileSync(file, 'utf8')) as { url?: string; pid?: number };
          if (rec.pid === process.pid && rec.url === url) fs.rmSync(file, { force: true });
        } catch {
          // gone already
        }
      })()),
  };
}
