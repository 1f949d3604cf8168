/**
 * Part 8, egress: an attacker's traffic against a run's egress proxy
 * (src/core/egress/egress-proxy.ts, in this process on a real Unix socket,
 * as the daemon runs it) and against web_fetch. Servers on loopback stand in
 * for the internet: 127.0.0.2 is the "public" site (listed exactly in
 * allowed_hosts), 127.0.0.1 on the same port is the private service behind
 * it that nothing may reach.
 *
 *  - rebinding: `rebind.test` answers 127.0.0.2 and 127.0.0.1 in turn, or
 *    both in a random order, at every lookup; many CONNECTs and plain
 *    requests race at once. The private service must see no connection.
 *  - smuggling: a GET whose chunked body is a request for another Host, and
 *    an allowed request pipelined with an unlisted one on one connection.
 *    The public site must see only requests for its own Host.
 *  - hostile upstream: answers with a status line node refuses to write on.
 *    The process must see no uncaught exception.
 *  - slowloris: connections that trickle their head a byte at a time (head
 *    deadline shortened to 1 s) must all be closed after it.
 *  - deep page: web_fetch of a page nested 10,000 deep; the longest stall of
 *    this process's event loop meanwhile must stay under a second.
 */
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { EgressProxy } from '../../src/core/egress/egress-proxy.js';
import { AllowList } from '../../src/core/egress/allow-list.js';
import { webFetch } from '../../src/core/egress/web-fetch.js';
import { EnvironmentDefinition, type EgressLine } from '../../src/core/schema/index.js';
import { systemClock } from '../../src/core/foundation/clock.js';
import type { ResolvedAddress } from '../../src/core/egress/network-port.js';
import { rng, round, sleep } from './common.js';

export interface EgressOptions {
  seed: number;
  requests: number;
  slowloris: number;
  keep: boolean;
}

const PUBLIC = '127.0.0.2';
const PRIVATE = '127.0.0.1';

/** One raw exchange with the proxy's socket: writes `data`, returns all it read until the proxy closed (or `ms`). */
function exchange(socket: string, data: string, ms = 10_000): Promise<string> {
  return new Promise((resolve) => {
    const s = net.connect(socket);
    let out = '';
    const t = setTimeout(() => s.destroy(), ms);
    s.on('data', (d) => (out += d.toString('latin1')));
    s.on('error', () => {});
    s.on('connect', () => s.write(data));
    s.on('close', () => {
      clearTimeout(t);
      resolve(out);
    });
  });
}

export async function egressChaos(o: EgressOptions) {
  const random = rng(o.seed);
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'chaos-egress-'));
  const uncaught: string[] = [];
  const onUncaught = (e: Error) => uncaught.push(e.message);
  process.on('uncaughtException', onUncaught);

  // The public site and the private service behind it, on one port.
  const hostsSeen: string[] = [];
  const site = http.createServer((req, res) => {
    hostsSeen.push(String(req.headers.host));
    req.resume();
    req.on('end', () => res.end('public'));
  });
  await new Promise<void>((r) => site.listen(0, PUBLIC, r));
  const port = (site.address() as net.AddressInfo).port;
  let privateConnections = 0;
  const secret = net.createServer((c) => {
    privateConnections += 1;
    c.end('HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nsecret');
  });
  await new Promise<void>((r) => secret.listen(port, PRIVATE, r));
  const hostile = net.createServer((c) => {
    c.on('error', () => {});
    c.once('data', () => c.end('HTTP/1.1 099 \x01odd\r\nContent-Length: 2\r\n\r\nok'));
  });
  await new Promise<void>((r) => hostile.listen(0, PUBLIC, r));
  const hostilePort = (hostile.address() as net.AddressInfo).port;
  const deep = http.createServer((_req, res) => res.writeHead(200, { 'Content-Type': 'text/html' }).end(`${'<div>'.repeat(10_000)}x${'</div>'.repeat(10_000)}`));
  await new Promise<void>((r) => deep.listen(0, PUBLIC, r));
  const deepPort = (deep.address() as net.AddressInfo).port;

  let flip = 0;
  const resolve = async (host: string): Promise<ResolvedAddress[]> => {
    if (host !== 'rebind.test') return [{ address: PUBLIC, family: 4 }];
    flip += 1;
    if (flip % 3 === 0) return random.chance(0.5) ? [{ address: PRIVATE, family: 4 }, { address: PUBLIC, family: 4 }] : [{ address: PUBLIC, family: 4 }, { address: PRIVATE, family: 4 }];
    return [{ address: flip % 2 ? PUBLIC : PRIVATE, family: 4 }];
  };
  const def = EnvironmentDefinition.parse({ network: 'limited', allowed_hosts: [`rebind.test:${port}`, `site.test:${port}`, `hostile.test:${hostilePort}`, `deep.test:${deepPort}`, PUBLIC] });
  const rules = { allow: AllowList.of(def), ownPorts: new Set<number>(), resolve };
  const lines: EgressLine[] = [];
  const proxy = new EgressProxy({ rules, clock: systemClock, log: (l) => lines.push(l), limits: { headMs: 1000, maxRequests: 1_000_000 } });
  const socket = path.join(home, 'egress.sock');
  await proxy.listen(socket);

  const t0 = Date.now();
  // rebinding, CONNECT and plain, all at once
  const answers = await Promise.all(
    Array.from({ length: o.requests }, (_, i) =>
      i % 2 ? exchange(socket, `CONNECT rebind.test:${port} HTTP/1.1\r\nHost: rebind.test:${port}\r\n\r\nGET / HTTP/1.1\r\nHost: rebind.test\r\nConnection: close\r\n\r\n`) : exchange(socket, `GET http://rebind.test:${port}/ HTTP/1.1\r\nHost: rebind.test\r\nConnection: close\r\n\r\n`),
    ),
  );
  const reachedPublic = answers.filter((a) => a.includes('public')).length;
  const leakedSecret = answers.filter((a) => a.includes('secret')).length;

  // smuggling: a chunked GET body that is a request of its own, and a pipelined unlisted request
  const smuggled = `GET /smuggled HTTP/1.1\r\nHost: unlisted.test:${port}\r\n\r\n`;
  for (let i = 0; i < Math.max(1, o.requests / 20); i++) {
    await exchange(socket, `GET http://site.test:${port}/a HTTP/1.1\r\nHost: site.test\r\nConnection: close\r\nTransfer-Encoding: chunked\r\n\r\n${smuggled.length.toString(16)}\r\n${smuggled}\r\n0\r\n\r\n`, 2000);
    await exchange(socket, `GET http://site.test:${port}/b HTTP/1.1\r\nHost: site.test\r\n\r\nGET http://unlisted.test:${port}/c HTTP/1.1\r\nHost: unlisted.test\r\nConnection: close\r\n\r\n`, 2000);
  }
  const foreignHosts = hostsSeen.filter((h) => h !== `site.test:${port}` && h !== `rebind.test:${port}` && h !== 'rebind.test').length;

  // hostile upstream
  const hostileAnswer = await exchange(socket, `GET http://hostile.test:${hostilePort}/ HTTP/1.1\r\nHost: hostile.test\r\n\r\n`);

  // slowloris: a byte every 200 ms, for three head deadlines
  const trickles = Array.from({ length: o.slowloris }, () => net.connect(socket));
  for (const s of trickles) s.on('error', () => {});
  for (let i = 0; i < 15; i++) {
    for (const s of trickles) if (!s.destroyed) s.write('G');
    await sleep(200);
  }
  const stillOpen = trickles.filter((s) => !s.destroyed && !s.closed).length;
  for (const s of trickles) s.destroy();

  // deep page through web_fetch, with the event loop watched
  const lag = monitorEventLoopDelay({ resolution: 10 });
  lag.enable();
  const fetched = await webFetch(`http://deep.test:${deepPort}/`, { network: 'limited', rules, log: () => {} }, { clock: systemClock, signal: new AbortController().signal, limits: { timeoutMs: 10_000 } });
  lag.disable();
  const maxStallMs = lag.max / 1e6;

  proxy.close();
  for (const s of [site, secret, hostile, deep]) s.close();
  process.off('uncaughtException', onUncaught);
  if (!o.keep) fs.rmSync(home, { recursive: true, force: true });

  return {
    part: 'egress',
    figures: {
      rebinding_requests: o.requests,
      reached_public: reachedPublic,
      refused_lines: lines.filter((l) => !l.allowed).length,
      hostile_answer: hostileAnswer.split('\r\n')[0] ?? '',
      deep_page: fetched.ok ? fetched.text.slice(0, 60) : fetched.error,
      max_event_loop_stall_ms: round(maxStallMs),
    },
    invariants: {
      private_connections: privateConnections,
      private_answers_to_agent: leakedSecret,
      foreign_hosts_upstream: foreignHosts,
      uncaught_exceptions: uncaught.length,
      hostile_not_502: hostileAnswer.startsWith('HTTP/1.1 502') ? 0 : 1,
      slowloris_open_after_deadline: stillOpen,
      event_loop_stalls_over_1s: maxStallMs > 1000 ? 1 : 0,
    },
    durations_s: { total: round((Date.now() - t0) / 1000) },
    home: o.keep ? home : undefined,
  };
}
