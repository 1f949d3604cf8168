/**
 * Starting the API for a command (`openboa serve`, `openboa daemon
 * --listen`): the address checked, the key found or made, the refusal of a
 * non-loopback address without a configured key, and the lines the
 * operator reads (the key once, when it was just made).
 */
import type { Runtime } from '../core/run/run-context.js';
import { configuredKey, loadOrCreateApiKey } from './api-key.js';
import { parseListen } from './listen-address.js';
import { startApiServer, type MetricsSource, type RunningServer } from './server.js';

export interface ListenerOptions {
  /** One line for the operator (stdout). */
  write: (line: string) => void;
  onAppend?: (sessionId: string) => void;
  /** Runs happen in this process (server.ts ApiOptions.runsHere). */
  runsHere?: boolean;
  /** The daemon's metrics, served at /metrics (server.ts ApiOptions.metrics). */
  metrics?: MetricsSource;
}

/** Thrown when the address or the key refuses the start; the message says what to do. */
export class ListenRefused extends Error {}

export async function openApiListener(rt: Runtime, listen: string, o: ListenerOptions): Promise<RunningServer> {
  let at;
  try {
    at = parseListen(listen);
  } catch (e) {
    throw new ListenRefused((e as Error).message);
  }
  if (!at.loopback && !configuredKey(rt.deps.env)) {
    throw new ListenRefused(`--listen ${listen} is not a loopback address: set OPENBOA_API_KEY (a key of your choosing) before serving beyond this machine`);
  }
  const key = loadOrCreateApiKey(rt.home, rt.deps.env);
  const server = await startApiServer(rt, at, { apiKey: key.value, ...(o.onAppend ? { onAppend: o.onAppend } : {}), ...(o.runsHere ? { runsHere: true } : {}), ...(o.metrics ? { metrics: o.metrics } : {}) });
  if (key.source === 'created') o.write(`openboa: API key (made now, kept in ${key.file}; shown once): ${key.value}`);
  const from = key.source === 'env' ? 'OPENBOA_API_KEY' : key.file;
  o.write(`openboa: API listening on ${server.url} (key: ${from}; SDK: new Anthropic({ baseURL: "${server.url}", apiKey }))`);
  return server;
}
