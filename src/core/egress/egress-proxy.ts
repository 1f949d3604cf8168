/**
 * The egress proxy of one run: the only way out of a `network: limited`
 * sandbox. It listens on a Unix socket that is bound into the sandbox (a
 * bridge inside forwards 127.0.0.1:3128 to it: sandbox/egress-bridge.ts)
 * and speaks HTTP proxying: CONNECT host:port (a tunnel, for HTTPS and
 * anything else over TCP) and plain HTTP requests in absolute form
 * (`GET http://host/path`). No SOCKS5: every client the sandbox ships
 * (curl, npm, apt, pip, git) speaks HTTP proxying.
 *
 * Every destination goes through resolveDestination (destination.ts): the
 * allow list by name and port, then the name resolved here and each
 * address checked, then a connection to that very address. A refusal is an
 * HTTP 403 whose `X-Openboa-Egress` header and body say why (curl prints
 * the body of a refused plain request; of a refused CONNECT only `-v` shows
 * the header, and runtime/egress.jsonl has it);
 * every connection, taken or refused, is a line of runtime/egress.jsonl.
 *
 * Written on node:http and node:net rather than @anthropic-ai/sandbox-runtime
 * (bubblewrap plus a filtering proxy, made for this) because that package
 * needs Node 22 and the daemon runs on Node 20. node:http's parser
 * (llhttp, strict mode) reads the requests: one header block, bounded by
 * maxHeaderBytes, no obsolete line folding, no duplicate Content-Length.
 *
 * Bounds: the header block (16 KiB), connections open at once (256) and
 * requests in the run (10,000), and time on the injected clock: a
 * connection that has not sent a whole request head within 30 s of
 * connecting (a byte now and then does not extend it), or once past its
 * head has moved no byte either way for 5 min, is closed by one sweep timer.
 */
import http from 'node:http';
import net from 'node:net';
import fs from 'node:fs';
import type { Duplex } from 'node:stream';
import type { Clock } from '../foundation/clock.js';
import { iso } from '../foundation/clock.js';
import { resolveDestination, type Destination, type DestinationRules } from './destination.js';
import type { EgressLogger } from './egress-log.js';

export interface EgressLimits {
  maxHeaderBytes: number;
  /** Client connections open at once; one more is closed at once. */
  maxOpen: number;
  /** Requests (tunnels and plain requests) in the proxy's life (one run). */
  maxRequests: number;
  /** A client that has not sent a whole request head within this is closed. */
  headMs: number;
  /** A connection with no byte moved either way for this long is closed. */
  idleMs: number;
  /** An upstream that does not accept the connection within this is given up (502). */
  connectMs: number;
}

export const EGRESS_LIMITS: EgressLimits = {
  maxHeaderBytes: 16 * 1024,
  maxOpen: 256,
  maxRequests: 10_000,
  headMs: 30_000,
  idleMs: 5 * 60_000,
  connectMs: 30_000,
};

/** Headers that belong to one hop (RFC 9110 §7.6.1) and the proxy's own: never forwarded. */
const HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'proxy-authorization', 'proxy-authenticate', 'te', 'trailer', 'transfer-encoding', 'upgrade']);

interface Tracked {
  /** When the connection was accepted: the head deadline counts from here, whatever bytes trickle in. */
  opened: number;
  last: number;
  /** The request head has been read (the head deadline no longer applies). */
  started: boolean;
}

export interface EgressProxyOptions {
  rules: DestinationRules;
  clock: Clock;
  log: EgressLogger;
  limits?: Partial<EgressLimits>;
}

export class EgressProxy {
  private readonly server: http.Server;
  private readonly limits: EgressLimits;
  private readonly open = new Map<Duplex, Tracked>();
  private requests = 0;
  private stopSweep: (() => void) | null = null;
  private socketPath: string | null = null;

  constructor(private readonly o: EgressProxyOptions) {
    this.limits = { ...EGRESS_LIMITS, ...o.limits };
    // Timeouts are ours, on the injected clock (the sweep): node's own are off.
    this.server = http.createServer({ maxHeaderSize: this.limits.maxHeaderBytes, requestTimeout: 0, headersTimeout: 0, keepAliveTimeout: 0, noDelay: true });
    this.server.on('connection', (s: net.Socket) => this.accept(s));
    // A connection's handling never rejects into the daemon: what was not foreseen closes that connection only.
    this.server.on('connect', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => void this.tunnel(req, socket, head).catch(() => socket.destroy()));
    this.server.on('request', (req, res) => void this.forward(req, res).catch(() => res.destroy()));
    this.server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
      const tooLarge = err.code === 'HPE_HEADER_OVERFLOW';
      const status = tooLarge ? '431 Request Header Fields Too Large' : '400 Bad Request';
      const why = tooLarge ? `the request head is larger than ${this.limits.maxHeaderBytes} bytes` : `the request could not be parsed (${err.code ?? err.message})`;
      if (socket.writable) socket.end(refusal(status, why));
      else socket.destroy();
    });
  }

  /** Starts listening on a Unix socket (owner-only). */
  async listen(socketPath: string): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(socketPath, () => {
        this.server.off('error', reject);
        resolve();
      });
    });
    fs.chmodSync(socketPath, 0o600);
    this.socketPath = socketPath;
    this.sweep();
  }

  /** Listens on 127.0.0.1 (a port of the system's choosing) instead: for the benchmark and tests. */
  async listenTcp(): Promise<number> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.sweep();
    return (this.server.address() as net.AddressInfo).port;
  }

  /** Client connections open now. */
  get openConnections(): number {
    return this.open.size;
  }

  /** Stops listening and closes every connection. Idempotent; must not throw. */
  close(): void {
    this.stopSweep?.();
    this.stopSweep = null;
    this.server.close();
    for (const s of this.open.keys()) s.destroy();
    this.open.clear();
    if (this.socketPath) fs.rmSync(this.socketPath, { force: true });
  }

  private accept(s: net.Socket): void {
    if (this.open.size >= this.limits.maxOpen) {
      s.destroy();
      return;
    }
    const t: Tracked = { opened: this.o.clock.now(), last: this.o.clock.now(), started: false };
    this.open.set(s, t);
    s.on('data', () => {
      t.last = this.o.clock.now();
    });
    s.on('close', () => this.open.delete(s));
    s.on('error', () => s.destroy());
  }

  private sweep(): void {
    const every = Math.max(1000, Math.min(this.limits.headMs, this.limits.idleMs) / 4);
    const tick = () => {
      const now = this.o.clock.now();
      for (const [s, t] of this.open) {
        if (t.started ? now - t.last >= this.limits.idleMs : now - t.opened >= this.limits.headMs) {
          this.open.delete(s);
          s.destroy();
        }
      }
      this.stopSweep = this.o.clock.setTimer(every, tick);
    };
    this.stopSweep = this.o.clock.setTimer(every, tick);
  }

  /** Marks a client connection as past its head, and its upstream's traffic as activity. */
  private started(client: Duplex, upstream?: net.Socket): void {
    const t = this.open.get(client);
    if (!t) return;
    t.started = true;
    upstream?.on('data', () => {
      t.last = this.o.clock.now();
    });
  }

  private overBudget(): string | null {
    this.requests += 1;
    return this.requests > this.limits.maxRequests ? `this run made more than ${this.limits.maxRequests} requests through the proxy` : null;
  }

  private line(via: 'connect' | 'http', d: { host: string; port: number }, address: string | null, reason: string | null, allowed: boolean, out = 0, inn = 0): void {
    this.o.log({ at: iso(this.o.clock.now()), via, host: d.host, port: d.port, address, allowed, reason, bytes_out: out, bytes_in: inn });
  }

  private async tunnel(req: http.IncomingMessage, client: Duplex, head: Buffer): Promise<void> {
    const target = authority(req.url ?? '');
    this.started(client);
    if (!target) {
      client.end(refusal('400 Bad Request', `CONNECT needs host:port, got ${JSON.stringify(req.url)}`));
      return;
    }
    const budget = this.overBudget();
    const dest: Destination = budget ? { ok: false, host: target.host, port: target.port, reason: budget } : await resolveDestination(target.host, target.port, this.o.rules);
    if (!dest.ok) {
      this.line('connect', dest, null, dest.reason, false);
      client.end(refusal('403 Forbidden', `refused ${dest.host}:${dest.port}: ${dest.reason}`));
      return;
    }
    if (client.destroyed) return;
    const upstream = net.connect({ host: dest.address, port: dest.port, family: dest.family, noDelay: true });
    const cancel = this.o.clock.setTimer(this.limits.connectMs, () => upstream.destroy(new Error(`no connection within ${this.limits.connectMs / 1000} s`)));
    let connected = false;
    upstream.once('connect', () => {
      connected = true;
      cancel();
      this.started(client, upstream);
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      client.pipe(upstream);
      upstream.pipe(client);
    });
    let ended = false;
    const end = (err?: Error) => {
      if (ended) return;
      ended = true;
      cancel();
      if (!connected) {
        const why = `could not connect to ${dest.host}:${dest.port} (${dest.address}): ${err?.message ?? 'closed'}`;
        this.line('connect', dest, dest.address, why, true);
        if (client.writable) client.end(refusal('502 Bad Gateway', why));
        upstream.destroy();
        return;
      }
      this.line('connect', dest, dest.address, err ? err.message : null, true, upstream.bytesWritten, upstream.bytesRead);
      upstream.destroy();
      client.destroy();
    };
    upstream.on('error', end);
    upstream.on('close', () => end());
    client.on('close', () => end());
    client.on('error', end);
  }

  private async forward(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    this.started(req.socket);
    let url: URL | null = null;
    try {
      url = new URL(req.url ?? '');
    } catch {
      // origin-form: not a proxy request
    }
    if (!url || url.protocol !== 'http:') {
      sendRefusal(res, 400, 'Bad Request', `this is an HTTP proxy: send an absolute http:// URL, or CONNECT host:port for anything else (got ${JSON.stringify((req.url ?? '').slice(0, 200))})`);
      return;
    }
    const port = url.port ? Number(url.port) : 80;
    const budget = this.overBudget();
    const dest: Destination = budget ? { ok: false, host: url.hostname, port, reason: budget } : await resolveDestination(url.hostname, port, this.o.rules);
    if (!dest.ok) {
      this.line('http', dest, null, dest.reason, false);
      sendRefusal(res, 403, 'Forbidden', `refused ${dest.host}:${dest.port}: ${dest.reason}`);
      return;
    }
    const headers: string[] = [];
    for (let i = 0; i < req.rawHeaders.length; i += 2) {
      const name = req.rawHeaders[i] as string;
      if (HOP.has(name.toLowerCase()) || name.toLowerCase() === 'host') continue;
      headers.push(name, req.rawHeaders[i + 1] as string);
    }
    // The Host the upstream sees is the one that was checked.
    headers.push('Host', url.host, 'Connection', 'close');
    // A body keeps its framing: without this header node's client writes a GET's chunked body unframed, and
    // the upstream reads it as requests of its own (for any Host). The parser took only a coding ending in chunked.
    const te = req.headers['transfer-encoding'];
    if (te !== undefined) headers.push('Transfer-Encoding', te);
    const up = http.request({ host: dest.address, family: dest.family, port: dest.port, method: req.method, path: `${url.pathname}${url.search}`, headers, setHost: false, agent: false });
    const cancel = this.o.clock.setTimer(this.limits.connectMs, () => up.destroy(new Error(`no connection within ${this.limits.connectMs / 1000} s`)));
    up.on('socket', (s: net.Socket) => {
      this.started(req.socket, s);
      s.once('connect', cancel);
    });
    let done = false;
    const finish = (reason: string | null) => {
      if (done) return;
      done = true;
      cancel();
      const s = up.socket;
      this.line('http', dest, dest.address, reason, true, s?.bytesWritten ?? 0, s?.bytesRead ?? 0);
    };
    up.on('response', (r) => {
      const out: string[] = [];
      for (let i = 0; i < r.rawHeaders.length; i += 2) {
        const name = r.rawHeaders[i] as string;
        if (!HOP.has(name.toLowerCase())) out.push(name, r.rawHeaders[i + 1] as string);
      }
      try {
        res.writeHead(r.statusCode ?? 502, r.statusMessage, out);
      } catch (e) {
        // Node's client parser takes what its server side refuses to write (a status below 100, a control
        // character in the reason phrase): the upstream's answer is refused, never thrown in the daemon.
        const why = `the upstream's answer cannot be passed on (${(e as Error).message})`;
        finish(why);
        sendRefusal(res, 502, 'Bad Gateway', `could not reach ${dest.host}:${dest.port} (${dest.address}): ${why}`);
        up.destroy();
        return;
      }
      r.pipe(res);
      r.on('end', () => finish(null));
      r.on('error', (e) => finish(e.message));
    });
    up.on('error', (e) => {
      finish(e.message);
      if (!res.headersSent) sendRefusal(res, 502, 'Bad Gateway', `could not reach ${dest.host}:${dest.port} (${dest.address}): ${e.message}`);
      else res.destroy();
    });
    res.on('close', () => {
      if (!done) up.destroy();
    });
    req.pipe(up);
  }
}

/** host:port of a CONNECT request (authority form; an IPv6 address in brackets), or null. */
function authority(target: string): { host: string; port: number } | null {
  const m = /^\[([0-9A-Fa-f:.]+)\]:(\d{1,5})$/.exec(target) ?? /^([^:\s[\]/@]+):(\d{1,5})$/.exec(target);
  if (!m) return null;
  return { host: m[1] as string, port: Number(m[2]) };
}

/** A refusal as raw HTTP (for a socket that node:http no longer answers for): why, in a header and the body. */
function refusal(status: string, why: string): string {
  const body = `openboa egress proxy: ${why}\n`;
  const header = why.replace(/[^\x20-\x7e]/g, '?').slice(0, 500);
  return `HTTP/1.1 ${status}\r\nContent-Type: text/plain; charset=utf-8\r\nX-Openboa-Egress: ${header}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
}

function sendRefusal(res: http.ServerResponse, code: number, text: string, why: string): void {
  const body = `openboa egress proxy: ${why}\n`;
  res.writeHead(code, text, { 'Content-Type': 'text/plain; charset=utf-8', 'X-Openboa-Egress': why.replace(/[^\x20-\x7e]/g, '?').slice(0, 500), 'Content-Length': Buffer.byteLength(body), Connection: 'close' });
  res.end(body);
}
