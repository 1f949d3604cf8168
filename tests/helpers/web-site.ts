/** Stand-ins for sites on the internet, on 127.0.0.1 (tests never leave the machine). */
import http from 'node:http';
import netModule from 'node:net';
import type net from 'node:net';
import type { TestContext } from 'node:test';

const DEEP = 6000;

/** A stand-in for a site on the internet: answers every request with its path. */
export async function site(t: TestContext, body = 'hello from the site'): Promise<number> {
  const server = http.createServer((req, res) => {
    if (req.url === '/redirect-out') {
      res.writeHead(302, { Location: 'http://unlisted.test/' }).end();
      return;
    }
    if (req.url === '/redirect-in') {
      res.writeHead(301, { Location: '/article' }).end();
      return;
    }
    if (req.url === '/deep') {
      // Nested deeper than turndown's recursion goes (it overflows its stack).
      res.writeHead(200, { 'Content-Type': 'text/html' }).end(`${'<div>'.repeat(DEEP)}x${'</div>'.repeat(DEEP)}`);
      return;
    }
    if (req.url === '/article') {
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end(`<html><head><title>T</title><style>p{}</style><script>alert(1)</script></head><body><h1>${body}</h1><p>Some <a href="/x">link</a> text.</p></body></html>`);
      return;
    }
    res.writeHead(200, { 'Content-Type': 'text/plain' }).end(`${body} ${req.url}`);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => server.close());
  return (server.address() as net.AddressInfo).port;
}


/**
 * A stand-in for a hostile server: answers every connection's first bytes
 * with `answer`, byte for byte, and keeps what it received (`got()`).
 */
export async function rawSite(t: TestContext, answer: string): Promise<{ port: number; got: () => string }> {
  const received: Buffer[] = [];
  const server = netModule.createServer((c) => {
    c.on('error', () => {});
    c.once('data', () => c.write(answer));
    c.on('data', (d: Buffer) => received.push(d));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => server.close());
  return { port: (server.address() as net.AddressInfo).port, got: () => Buffer.concat(received).toString('latin1') };
}
