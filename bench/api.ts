/**
 * `npm run bench -- api`: the HTTP API (docs/http.md) in this process, driven
 * by the official SDK over 127.0.0.1.
 *
 * - POST …/events → the event on an open SSE stream (no daemon: only the
 *   server's path from append to stream): p50 < 10 ms, p99 < 50 ms.
 * - POST …/events → the run's session.status_running on the stream, with the
 *   daemon in the same process (as `openboa daemon --listen`): p50 < 15 ms.
 * - 200 concurrent SSE clients on one session: every client gets every
 *   event, in order; CPU and RSS of the process (server and clients: they
 *   share it) reported.
 * - 10,000 sessions on disk: GET /v1/sessions/{id} (throughput, p99) and
 *   GET /v1/sessions?limit=20 (p99 < 50 ms: a page reads only its snapshots).
 */
import { performance } from 'node:perf_hooks';
import Anthropic from '@anthropic-ai/sdk';
import { systemDeps } from '../src/core/foundation/deps.js';
import type { Runtime } from '../src/core/run/run-context.js';
import { Daemon } from '../src/daemon/daemon.js';
import { startApiServer } from '../src/http/server.js';
import { parseListen } from '../src/http/listen-address.js';
import { benchHome, manySessions, type BenchHome } from './fixtures.js';
import { median, percentile, round } from './stats.js';

const KEY = 'bench-key';

type StreamEvent = { type: string; id?: string; content?: Array<{ text?: string }> };

async function withServer<T>(b: BenchHome, daemon: boolean, fn: (client: Anthropic, rt: Runtime) => Promise<T>): Promise<T> {
  const rt: Runtime = { home: b.home, store: b.store, deps: systemDeps() };
  const d = daemon ? new Daemon(rt, { concurrency: 4, poll: false, sweepMs: 30_000, json: true, write: () => {} }) : null;
  if (d) await d.start();
  const server = await startApiServer(rt, parseListen('127.0.0.1:0'), { apiKey: KEY, ...(d ? { onAppend: (id: string) => void d.evaluate(id) } : {}) });
  try {
    return await fn(new Anthropic({ baseURL: server.url, apiKey: KEY, maxRetries: 0 }), rt);
  } finally {
    await server.close();
    await d?.stop();
  }
}

/** An iterator over a stream that stays open between reads. */
function reader(stream: AsyncIterable<StreamEvent>) {
  const it = stream[Symbol.asyncIterator]();
  return async (until: (e: StreamEvent) => boolean): Promise<StreamEvent[]> => {
    const out: StreamEvent[] = [];
    for (;;) {
      const r = await it.next();
      if (r.done) throw new Error('stream ended');
      out.push(r.value);
      if (until(r.value)) return out;
    }
  };
}

const text = (t: string) => ({ events: [{ type: 'user.message' as const, content: [{ type: 'text' as const, text: t }] }] });
const says = (t: string) => (e: StreamEvent) => e.type === 'user.message' && e.content?.[0]?.text === t;

async function postToStream(samples: number) {
  const b = benchHome();
  try {
    return await withServer(b, false, async (client) => {
      const s = await client.beta.sessions.create({ agent: 'fast', environment_id: 'local' });
      const read = reader((await client.beta.sessions.events.stream(s.id)) as AsyncIterable<StreamEvent>);
      const lat: number[] = [];
      for (let i = 0; i < samples + 10; i++) {
        const t0 = performance.now();
        const got = read(says(`m${i}`));
        await client.beta.sessions.events.send(s.id, text(`m${i}`));
        await got;
        if (i >= 10) lat.push(performance.now() - t0);
      }
      return { samples, p50_ms: round(median(lat)), p99_ms: round(percentile(lat, 99)), target: 'p50 < 10 ms, p99 < 50 ms' };
    });
  } finally {
    b.cleanup();
  }
}

async function postToRunning(samples: number) {
  const b = benchHome();
  try {
    return await withServer(b, true, async (client) => {
      const s = await client.beta.sessions.create({ agent: 'fast', environment_id: 'local' });
      const read = reader((await client.beta.sessions.events.stream(s.id)) as AsyncIterable<StreamEvent>);
      const lat: number[] = [];
      for (let i = 0; i < samples + 5; i++) {
        const t0 = performance.now();
        const got = read((e) => e.type === 'session.status_running');
        await client.beta.sessions.events.send(s.id, text(`run ${i}`));
        await got;
        if (i >= 5) lat.push(performance.now() - t0);
        await read((e) => e.type === 'session.status_idle');
      }
      return { samples, p50_ms: round(median(lat)), p99_ms: round(percentile(lat, 99)), target: 'p50 < 15 ms' };
    });
  } finally {
    b.cleanup();
  }
}

async function manyClients(clients: number, messages: number) {
  const b = benchHome();
  try {
    return await withServer(b, false, async (client) => {
      const s = await client.beta.sessions.create({ agent: 'fast', environment_id: 'local' });
      const streams = await Promise.all(Array.from({ length: clients }, () => client.beta.sessions.events.stream(s.id)));
      const cpu0 = process.cpuUsage();
      const t0 = performance.now();
      const received = streams.map(async (st) => {
        const texts: string[] = [];
        for await (const e of st as AsyncIterable<StreamEvent>) {
          if (e.type !== 'user.message') continue;
          texts.push(e.content?.[0]?.text ?? '');
          if (texts.length === messages) break;
        }
        return texts;
      });
      for (let i = 0; i < messages; i++) await client.beta.sessions.events.send(s.id, text(`n${i}`));
      const all = await Promise.all(received);
      const ms = performance.now() - t0;
      const cpu = process.cpuUsage(cpu0);
      const want = Array.from({ length: messages }, (_, i) => `n${i}`).join(',');
      const complete = all.filter((t) => t.join(',') === want).length;
      return {
        clients,
        messages,
        clients_with_every_event_in_order: complete,
        wall_ms: round(ms),
        cpu_ms: round((cpu.user + cpu.system) / 1000),
        rss_mb: round(process.memoryUsage().rss / 1024 / 1024, 1),
        note: 'CPU and RSS are the whole process: the server and its 200 SDK clients',
      };
    });
  } finally {
    b.cleanup();
  }
}

async function manySessionsReads(n: number, gets: number, lists: number) {
  const b = benchHome();
  try {
    const ids = manySessions(b, n);
    return await withServer(b, false, async (client) => {
      const one: number[] = [];
      const t0 = performance.now();
      for (let i = 0; i < gets; i++) {
        const id = ids[(i * 7919) % ids.length] as string;
        const s0 = performance.now();
        await client.beta.sessions.retrieve(id);
        one.push(performance.now() - s0);
      }
      const seconds = (performance.now() - t0) / 1000;
      const page: number[] = [];
      for (let i = 0; i < lists; i++) {
        const s0 = performance.now();
        const r = await client.beta.sessions.list({ limit: 20 });
        if (r.data.length !== 20) throw new Error(`a page of ${r.data.length}`);
        page.push(performance.now() - s0);
      }
      return {
        sessions: n,
        retrieve: { requests: gets, per_second: round(gets / seconds, 0), p50_ms: round(median(one)), p99_ms: round(percentile(one, 99)) },
        list_limit_20: { requests: lists, p50_ms: round(median(page)), p99_ms: round(percentile(page, 99)), target: 'p99 < 50 ms' },
      };
    });
  } finally {
    b.cleanup();
  }
}

export async function benchApi() {
  return {
    bench: 'api',
    post_to_stream: await postToStream(200),
    post_to_status_running_daemon_in_process: await postToRunning(50),
    sse_200_clients: await manyClients(200, 20),
    at_10k_sessions: await manySessionsReads(10_000, 2000, 200),
  };
}
