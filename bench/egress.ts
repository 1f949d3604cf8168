/**
 * The egress proxy's cost (src/core/egress/egress-proxy.ts), against a
 * server on 127.0.0.1:
 *
 * - latency: the same `curl` of a small page, direct and through the proxy
 *   (plain HTTP, and a CONNECT tunnel), 60 runs each, interleaved; the
 *   figure is the p50 difference. Target: < 5 ms.
 * - memory: 100 tunnels held open at once, each echoing 16 KB, five rounds;
 *   the RSS and heap after each round (after a GC) should stay flat.
 */
import http from 'node:http';
import net from 'node:net';
import { execFile } from 'node:child_process';
import { EgressProxy } from '../src/core/egress/egress-proxy.js';
import { AllowList } from '../src/core/egress/allow-list.js';
import { EnvironmentDefinition } from '../src/core/schema/index.js';
import { systemClock } from '../src/core/foundation/clock.js';
import { median, round } from './stats.js';

const RUNS = 60;
const CONCURRENT = 100;
const ROUNDS = 5;

function curlMs(args: string[]): Promise<number> {
  const t0 = performance.now();
  return new Promise((resolve, reject) =>
    execFile('curl', ['-sS', '-o', '/dev/null', ...args], (e) => (e ? reject(e) : resolve(performance.now() - t0))),
  );
}

export async function benchEgress() {
  const site = http.createServer((_req, res) => res.end('x'.repeat(1024)));
  await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
  const sitePort = (site.address() as net.AddressInfo).port;
  const echo = net.createServer((s) => s.pipe(s));
  await new Promise<void>((r) => echo.listen(0, '127.0.0.1', r));
  const echoPort = (echo.address() as net.AddressInfo).port;

  const def = EnvironmentDefinition.parse({ network: 'limited', allowed_hosts: [`site.test:${sitePort}`, `site.test:${echoPort}`, '127.0.0.1'] });
  const proxy = new EgressProxy({
    rules: { allow: AllowList.of(def), ownPorts: new Set(), resolve: async () => [{ address: '127.0.0.1', family: 4 }] },
    clock: systemClock,
    log: () => {},
  });
  const proxyUrl = `http://127.0.0.1:${await proxy.listenTcp()}`;

  const direct: number[] = [];
  const plain: number[] = [];
  const tunnel: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    direct.push(await curlMs([`http://127.0.0.1:${sitePort}/`]));
    plain.push(await curlMs(['-x', proxyUrl, `http://site.test:${sitePort}/`]));
    tunnel.push(await curlMs(['-p', '-x', proxyUrl, `http://site.test:${sitePort}/`]));
  }

  const port = Number(new URL(proxyUrl).port);
  const memory: Array<{ round: number; open: number; rss_mb: number; heap_mb: number }> = [];
  const gc = (globalThis as { gc?: () => void }).gc;
  for (let round_ = 1; round_ <= ROUNDS; round_++) {
    const sockets = await Promise.all(
      Array.from({ length: CONCURRENT }, () =>
        new Promise<net.Socket>((resolve, reject) => {
          const s = net.connect(port, '127.0.0.1', () => s.write(`CONNECT site.test:${echoPort} HTTP/1.1\r\nHost: site.test:${echoPort}\r\n\r\n`));
          let head = '';
          const onData = (d: Buffer) => {
            head += d.toString('latin1');
            if (!head.includes('\r\n\r\n')) return;
            s.off('data', onData);
            if (!head.startsWith('HTTP/1.1 200')) reject(new Error(head));
            else resolve(s);
          };
          s.on('data', onData);
          s.on('error', reject);
        }),
      ),
    );
    // Every tunnel carries 16 KB each way while all are open.
    await Promise.all(
      sockets.map(
        (s) =>
          new Promise<void>((resolve) => {
            let got = 0;
            s.on('data', (d) => {
              got += d.length;
              if (got >= 16 * 1024) resolve();
            });
            s.write(Buffer.alloc(16 * 1024, 1));
          }),
      ),
    );
    const open = proxy.openConnections;
    for (const s of sockets) s.destroy();
    gc?.();
    const m = process.memoryUsage();
    memory.push({ round: round_, open, rss_mb: round(m.rss / 2 ** 20, 1), heap_mb: round(m.heapUsed / 2 ** 20, 1) });
  }

  proxy.close();
  site.close();
  echo.close();
  const d = median(direct);
  return {
    name: 'egress',
    curl_direct_p50_ms: round(d, 2),
    curl_proxy_plain_p50_ms: round(median(plain), 2),
    curl_proxy_connect_p50_ms: round(median(tunnel), 2),
    added_plain_p50_ms: round(median(plain) - d, 2),
    added_connect_p50_ms: round(median(tunnel) - d, 2),
    target_added_p50_ms: '< 5',
    concurrent_tunnels: CONCURRENT,
    memory_by_round: memory,
    gc: gc ? 'forced between rounds' : 'not exposed (run node with --expose-gc for exact heap figures)',
    target_memory: 'flat across rounds',
  };
}
