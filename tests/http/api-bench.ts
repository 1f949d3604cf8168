/**
 * The HTTP API over a run bench (tests/helpers/run.ts): the server on
 * 127.0.0.1 (an ephemeral port) in the bench's temp home, and the real
 * @anthropic-ai/sdk client pointed at it.
 */
import type { TestContext } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import { startApiServer, type RunningServer } from '../../src/http/server.js';
import { parseListen } from '../../src/http/listen-address.js';
import type { StreamLimits } from '../../src/http/stream-hub.js';
import { beforeHomeRemoved } from '../helpers/home.js';
import { bench, type Bench } from '../helpers/run.js';

export const KEY = 'test-api-key-0123456789';

export interface ApiBench extends Bench {
  server: RunningServer;
  client: Anthropic;
  /** A client with another key (or token). */
  clientWith(key: string): Anthropic;
}

export async function apiBench(t: TestContext, o: Parameters<typeof bench>[1] & { onAppend?: (id: string) => void; streamLimits?: StreamLimits } = {}): Promise<ApiBench> {
  const b = await bench(t, o);
  const server = await startApiServer(b.rt, parseListen('127.0.0.1:0'), { apiKey: KEY, runsHere: true, ...(o.onAppend ? { onAppend: o.onAppend } : {}), ...(o.streamLimits ? { streamLimits: o.streamLimits } : {}) });
  beforeHomeRemoved(t, () => server.close());
  const clientWith = (key: string) => new Anthropic({ baseURL: server.url, apiKey: key, maxRetries: 0 });
  return { ...b, server, client: clientWith(KEY), clientWith };
}
