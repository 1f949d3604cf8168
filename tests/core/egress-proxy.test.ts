/**
 * The egress proxy on its own (a TCP port on 127.0.0.1 instead of the run's
 * Unix socket), driven by curl: servers on 127.0.0.1 stand in for the
 * internet, names resolve through a table (tableNetwork), never the DNS.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { EgressProxy } from '../../src/core/egress/egress-proxy.js';
import { AllowList } from '../../src/core/egress/allow-list.js';
import { egressLog } from '../../src/core/egress/egress-log.js';
import { EnvironmentDefinition, EgressLine } from '../../src/core/schema/index.js';
import { ManualClock } from '../helpers/clock.js';
import { tableNetwork } from '../helpers/deps.js';
import { Redactor } from '../../src/core/foundation/redact.js';
import { rawSite, site } from '../helpers/web-site.js';

function curl(args: string[]): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    execFile('curl', ['-sS', '--max-time', '20', ...args], { env: { PATH: process.env.PATH } }, (e, out, err) => resolve({ code: e ? Number((e as { code?: number }).code ?? 1) : 0, out, err }));
  });
}

async function proxy(t: TestContext, env: Record<string, unknown>, table: Record<string, string>, ownPorts: number[] = []) {
  const def = EnvironmentDefinition.parse(env);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'egress-test-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const network = tableNetwork(table);
  for (const p of ownPorts) network.ownPorts.add(p);
  const clock = new ManualClock();
  const write = egressLog(dir, Redactor.none);
  let logged = 0;
  const waiters: Array<{ n: number; resolve: () => void }> = [];
  const log = (l: EgressLine) => {
    write(l);
    logged += 1;
    for (const w of waiters.filter((x) => x.n <= logged)) w.resolve();
  };
  /** Resolves once n lines were logged (a tunnel's line is written when both of its sides closed). */
  const loggedLines = (n: number) => (logged >= n ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ n, resolve })));
  const p = new EgressProxy({ rules: { allow: AllowList.of(def), ownPorts: network.ownPorts, resolve: network.resolve }, clock, log });
  const port = await p.listenTcp();
  t.after(() => p.close());
  const lines = () =>
    fs.existsSync(path.join(dir, 'egress.jsonl'))
      ? fs.readFileSync(path.join(dir, 'egress.jsonl'), 'utf8').trim().split('\n').map((l) => EgressLine.parse(JSON.parse(l)))
      : [];
  return { url: `http://127.0.0.1:${port}`, proxy: p, clock, lines, loggedLines };
}

test('an allowed host is reached through the proxy, by plain HTTP and through a CONNECT tunnel, and each connection is a line', async (t) => {
  const port = await site(t);
  const px = await proxy(t, { network: 'limited', allowed_hosts: [`allowed.test:${port}`, '127.0.0.1'] }, { 'allowed.test': '127.0.0.1' });
  const plain = await curl(['-x', px.url, `http://allowed.test:${port}/a`]);
  assert.equal(plain.out, 'hello from the site /a', plain.err);
  const tunnel = await curl(['-p', '-x', px.url, `http://allowed.test:${port}/b`]);
  assert.equal(tunnel.out, 'hello from the site /b', tunnel.err);
  await px.loggedLines(2);
  const lines = px.lines();
  assert.deepEqual(lines.map((l) => [l.via, l.host, l.port, l.address, l.allowed]), [
    ['http', 'allowed.test', port, '127.0.0.1', true],
    ['connect', 'allowed.test', port, '127.0.0.1', true],
  ]);
  assert.ok(lines.every((l) => l.bytes_in > 0 && l.bytes_out > 0));
});

test('a listed name that resolves to loopback or the metadata address is refused (DNS rebinding), before any connection', async (t) => {
  const port = await site(t);
  const px = await proxy(t, { network: 'limited', allowed_hosts: [`rebind.test:${port}`, 'metadata.test'] }, { 'rebind.test': '127.0.0.1', 'metadata.test': '169.254.169.254' });
  const r = await curl(['-x', px.url, `http://rebind.test:${port}/`]);
  assert.match(r.out, /refused rebind\.test:\d+: rebind\.test resolves to 127\.0\.0\.1 is a loopback address/);
  const m = await curl(['-p', '-v', '-x', px.url, 'http://metadata.test/latest/meta-data/']);
  assert.notEqual(m.code, 0);
  assert.match(m.err, /403/);
  assert.match(m.err, /X-Openboa-Egress: refused metadata\.test:80: .*169\.254\.169\.254 is a link-local address/);
  assert.deepEqual(px.lines().map((l) => [l.host, l.allowed, l.address]), [
    ['rebind.test', false, null],
    ['metadata.test', false, null],
  ]);
});

test('an unlisted host, an unlisted port and an IP literal are refused with a reason the agent reads', async (t) => {
  const port = await site(t);
  const px = await proxy(t, { network: 'limited', allowed_hosts: ['allowed.test'] }, { 'allowed.test': '127.0.0.1', 'other.test': '127.0.0.1' });
  const unlisted = await curl(['-x', px.url, `http://other.test:${port}/`]);
  assert.equal(unlisted.out, "openboa egress proxy: refused other.test:" + port + ": other.test is not in this environment's allowed_hosts\n");
  const badPort = await curl(['-x', px.url, `http://allowed.test:${port}/`]);
  assert.match(badPort.out, /port \d+ of allowed\.test is not allowed/);
  const literal = await curl(['-x', px.url, `http://127.0.0.1:${port}/`]);
  assert.match(literal.out, /127\.0\.0\.1 is not in this environment's allowed_hosts/);
  const v6 = await curl(['-p', '-v', '-x', px.url, `http://[::1]:${port}/`]);
  assert.match(v6.err, /X-Openboa-Egress: refused ::1:\d+: ::1 is not in/);
});

test("the daemon's own port is refused even where the environment lists its address", async (t) => {
  const daemonPort = await site(t, 'the daemon API');
  const px = await proxy(t, { network: 'limited', allowed_hosts: [`api.test:${daemonPort}`, '127.0.0.1'] }, { 'api.test': '127.0.0.1' }, [daemonPort]);
  const r = await curl(['-x', px.url, `http://api.test:${daemonPort}/v1/sessions`]);
  assert.match(r.out, /127\.0\.0\.1:\d+ is one of the daemon's own ports/);
  assert.doesNotMatch(r.out, /the daemon API/);
});

test('network: none allows nothing, and a huge request head is refused', async (t) => {
  const port = await site(t);
  const none = await proxy(t, { network: 'none' }, { 'allowed.test': '127.0.0.1' });
  const r = await curl(['-x', none.url, `http://allowed.test:${port}/`]);
  assert.match(r.out, /allows no network/);
  const big = await curl(['-x', none.url, '-H', `X-Big: ${'a'.repeat(20_000)}`, `http://allowed.test:${port}/`]);
  assert.match(big.out, /request head is larger than 16384 bytes/);
});

test('a client that never sends its request is closed on the injected clock', async (t) => {
  const px = await proxy(t, { network: 'limited', allowed_hosts: ['allowed.test'] }, {});
  const s = net.connect(Number(new URL(px.url).port), '127.0.0.1');
  s.on('error', () => {}); // the proxy resets it
  await new Promise((r) => s.once('connect', r));
  s.write('CONNECT allowed.test:443 HTTP/1.1\r\n');
  while (px.proxy.openConnections === 0) await new Promise((r) => setImmediate(r));
  const closed = new Promise((r) => s.once('close', r));
  await px.clock.advance(31_000);
  await closed;
  assert.equal(px.proxy.openConnections, 0);
});

test("an upstream's malformed status line is a 502 to the client, not an exception in the daemon", async (t) => {
  // Node's parser takes a control character in the reason phrase and a status below 100; writing them on is what throws.
  for (const statusLine of ['HTTP/1.1 200 O\x01K', 'HTTP/1.1 099 Odd']) {
    const up = await rawSite(t, `${statusLine}\r\nContent-Length: 2\r\n\r\nok`);
    const px = await proxy(t, { network: 'limited', allowed_hosts: [`up.test:${up.port}`, '127.0.0.1'] }, { 'up.test': '127.0.0.1' });
    const r = await curl(['-i', '-x', px.url, `http://up.test:${up.port}/`]);
    assert.match(r.out, /^HTTP\/1\.1 502 Bad Gateway/, JSON.stringify(statusLine));
    assert.match(r.out, /could not reach up\.test:\d+ \(127\.0\.0\.1\): the upstream's answer cannot be passed on/);
    await px.loggedLines(1);
    assert.equal(px.lines()[0]?.allowed, true);
  }
});

test('a chunked body on a GET reaches the upstream as that body, not as a second request of its own (smuggling)', async (t) => {
  const seen: Array<{ host: string | undefined; url: string | undefined; body: string }> = [];
  const upstream = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      seen.push({ host: req.headers.host, url: req.url, body });
      res.end('ok');
    });
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  t.after(() => upstream.close());
  const port = (upstream.address() as net.AddressInfo).port;
  const px = await proxy(t, { network: 'limited', allowed_hosts: [`allowed.test:${port}`, '127.0.0.1'] }, { 'allowed.test': '127.0.0.1' });
  const smuggled = `GET /smuggled HTTP/1.1\r\nHost: unlisted.test:${port}\r\n\r\n`;
  const s = net.connect(Number(new URL(px.url).port), '127.0.0.1');
  s.on('error', () => {});
  s.write(`GET http://allowed.test:${port}/first HTTP/1.1\r\nHost: allowed.test\r\nTransfer-Encoding: chunked\r\n\r\n${smuggled.length.toString(16)}\r\n${smuggled}\r\n0\r\n\r\n`);
  await px.loggedLines(1);
  s.destroy();
  assert.deepEqual(seen, [{ host: `allowed.test:${port}`, url: '/first', body: smuggled }]);
});

test('a client trickling its request head a byte at a time is still closed when the head deadline passes (slowloris)', async (t) => {
  const px = await proxy(t, { network: 'limited', allowed_hosts: ['allowed.test'] }, {});
  const s = net.connect(Number(new URL(px.url).port), '127.0.0.1');
  s.on('error', () => {});
  await new Promise((r) => s.once('connect', r));
  while (px.proxy.openConnections === 0) await new Promise((r) => setImmediate(r));
  // A byte every 5 s of the clock: each one arrives well within the 30 s, the head never ends.
  for (const byte of 'CONNECT a') {
    await new Promise<void>((r) => s.write(byte, () => r()));
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
    await px.clock.advance(5_000);
  }
  assert.equal(px.proxy.openConnections, 0);
  s.destroy();
});
