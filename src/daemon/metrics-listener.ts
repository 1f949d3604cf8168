/**
 * `openboa daemon --metrics-listen HOST:PORT`: an HTTP listener of its own
 * that answers GET /metrics with the daemon's metrics (metrics.ts). Meant for
 * a loopback or private address: it has no authentication, like most
 * Prometheus exporters; the metrics hold no session ids and no secrets.
 */
import http from 'node:http';
import { OpenboaError } from '../core/foundation/errors.js';
import type { DaemonMetrics } from './metrics.js';

export interface MetricsListener {
  /** Where it listens (the port the system chose for port 0). */
  host: string;
  port: number;
  close(): Promise<void>;
}

/** HOST:PORT (an IPv6 host in brackets: [::1]:9464); throws invalid_input naming what is wrong. */
export function parseListenAddress(value: string): { host: string; port: number } {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]\s]+)):(\d{1,5})$/.exec(value.trim());
  const port = m ? Number(m[3]) : NaN;
  if (!m || port > 65_535) throw new OpenboaError('invalid_input', `--metrics-listen: expected HOST:PORT (e.g. 127.0.0.1:9464), got "${value}"`);
  return { host: (m[1] ?? m[2])!, port };
}

export function listenMetrics(address: string, metrics: DaemonMetrics): Promise<MetricsListener> {
  const { host, port } = parseListenAddress(address);
  const server = http.createServer(metrics.metricsHandler);
  return new Promise((resolve, reject) => {
    server.once('error', (e: NodeJS.ErrnoException) => reject(new OpenboaError('invalid_input', `--metrics-listen ${address}: cannot listen (${e.code ?? e.message})`)));
    server.listen(port, host, () => {
      const a = server.address();
      resolve({
        host,
        port: typeof a === 'object' && a ? a.port : port,
        close: () => new Promise<void>((r) => server.close(() => r())),
      });
    });
  });
}
