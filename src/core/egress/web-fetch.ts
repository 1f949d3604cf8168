/**
 * web_fetch's work: the daemon fetches a URL on the agent's behalf under
 * the environment's network rules (egress-access.ts), the same rules as the
 * egress proxy: each hop's name and port checked against the allow list,
 * the name resolved here, every address checked, and the connection made to
 * the checked address (a `lookup` that answers only that address, so
 * https still verifies the certificate against the name). Redirects are
 * followed by hand, each one checked again, at most MAX_REDIRECTS. The body
 * is read up to maxBytes and within timeoutMs (a timer of the injected
 * clock); HTML becomes Markdown (turndown, in a worker thread:
 * html-markdown.ts) within the same time, other text is given as it came.
 * A page turndown cannot convert (nested too deep, too slow) is given as its
 * HTML, said so.
 * Every hop is a line of runtime/egress.jsonl (`via: web_fetch`).
 */
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import type { Clock } from '../foundation/clock.js';
import { iso } from '../foundation/clock.js';
import { resolveDestination } from './destination.js';
import type { EgressAccess } from './egress-access.js';
import { htmlToMarkdown } from './html-markdown.js';

export interface WebFetchLimits {
  /** Bytes of body read at most; the rest is dropped (and said so). */
  maxBytes: number;
  /** The whole fetch, redirects included. */
  timeoutMs: number;
  maxRedirects: number;
}

export const WEB_FETCH_LIMITS: WebFetchLimits = { maxBytes: 5 * 1024 * 1024, timeoutMs: 30_000, maxRedirects: 5 };

export type WebFetchResult =
  | { ok: true; url: string; finalUrl: string; status: number; statusText: string; contentType: string; text: string; truncated: boolean; bytes: number }
  | { ok: false; error: string };

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

export async function webFetch(rawUrl: string, access: EgressAccess, o: { clock: Clock; signal: AbortSignal; limits?: Partial<WebFetchLimits> }): Promise<WebFetchResult> {
  const limits = { ...WEB_FETCH_LIMITS, ...o.limits };
  if (access.network === 'none') return { ok: false, error: "this environment's network is none: web_fetch reaches nothing (an environment with network: limited and allowed_hosts, or host, is needed)" };
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    return { ok: false, error: `${JSON.stringify(rawUrl)} is not a URL` };
  }
  const deadline = new AbortController();
  const cancel = o.clock.setTimer(limits.timeoutMs, () => deadline.abort(new Error(`no answer within ${limits.timeoutMs / 1000} s`)));
  const signal = AbortSignal.any([o.signal, deadline.signal]);
  try {
    for (let hop = 0; ; hop++) {
      if (url.protocol !== 'http:' && url.protocol !== 'https:') return { ok: false, error: `${url.href}: only http:// and https:// URLs are fetched` };
      if (url.username || url.password) return { ok: false, error: `${url.protocol}//${url.host}: a URL with credentials in it is not fetched` };
      const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
      const dest = await resolveDestination(url.hostname, port, access.rules, signal);
      const line = { at: iso(o.clock.now()), via: 'web_fetch' as const, host: dest.host, port };
      if (!dest.ok) {
        access.log({ ...line, address: null, allowed: false, reason: dest.reason, bytes_out: 0, bytes_in: 0 });
        const what = hop === 0 ? `refused ${url.href}` : `the redirect to ${url.href} was refused`;
        return { ok: false, error: `${what}: ${dest.reason}` };
      }
      const got = await get(url, dest.address, dest.family, limits.maxBytes, signal);
      access.log({ ...line, address: dest.address, allowed: true, reason: got.ok ? null : got.error, bytes_out: got.bytesOut, bytes_in: got.bytesIn });
      if (!got.ok) return { ok: false, error: `${url.href}: ${got.error}` };
      const location = got.res.headers.location;
      if (REDIRECTS.has(got.res.statusCode ?? 0) && location) {
        if (hop >= limits.maxRedirects) return { ok: false, error: `${rawUrl}: more than ${limits.maxRedirects} redirects` };
        url = new URL(location, url);
        continue;
      }
      const contentType = String(got.res.headers['content-type'] ?? '');
      return {
        ok: true,
        url: rawUrl,
        finalUrl: url.href,
        status: got.res.statusCode ?? 0,
        statusText: got.res.statusMessage ?? '',
        contentType,
        text: await readable(got.body, contentType, signal),
        truncated: got.truncated,
        bytes: got.body.length,
      };
    }
  } finally {
    cancel();
  }
}

type Got = ({ ok: true; res: http.IncomingMessage; body: Buffer; truncated: boolean } | { ok: false; error: string }) & { bytesOut: number; bytesIn: number };

/** One GET to the checked address, the body read up to maxBytes. Never rejects. */
function get(url: URL, address: string, family: 4 | 6, maxBytes: number, signal: AbortSignal): Promise<Got> {
  // The connection goes to the address that was checked, whatever the name resolves to now.
  const lookup: LookupFunction = (_host, opts, cb) => {
    if (opts.all) (cb as unknown as (e: null, a: Array<{ address: string; family: number }>) => void)(null, [{ address, family }]);
    else cb(null, address, family);
  };
  const mod = url.protocol === 'https:' ? https : http;
  return new Promise((resolve) => {
    let settled = false;
    const req = mod.request(url, { method: 'GET', agent: false, lookup, signal, headers: { 'User-Agent': 'openboa-web-fetch', Accept: 'text/html, text/markdown, text/plain;q=0.9, */*;q=0.5', 'Accept-Encoding': 'identity', Connection: 'close' } });
    const counts = () => ({ bytesOut: req.socket?.bytesWritten ?? 0, bytesIn: req.socket?.bytesRead ?? 0 });
    const done = (g: Got) => {
      if (settled) return;
      settled = true;
      resolve(g);
    };
    req.on('error', (e) => done({ ok: false, error: signal.aborted ? String((signal.reason as Error)?.message ?? 'stopped') : e.message, ...counts() }));
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      let truncated = false;
      res.on('data', (c: Buffer) => {
        if (truncated) return;
        const room = maxBytes - size;
        if (c.length > room) {
          chunks.push(c.subarray(0, room));
          size = maxBytes;
          truncated = true;
          const r = { ok: true as const, res, body: Buffer.concat(chunks), truncated, ...counts() };
          res.destroy();
          done(r);
          return;
        }
        chunks.push(c);
        size += c.length;
      });
      res.on('end', () => done({ ok: true, res, body: Buffer.concat(chunks), truncated, ...counts() }));
      res.on('error', (e) => done({ ok: false, error: e.message, ...counts() }));
    });
    req.end();
  });
}

/**
 * The body as text for the model: HTML as Markdown (or as it came, said so,
 * when it cannot be converted before the signal aborts), other text as it
 * came, anything else named only.
 */
export async function readable(body: Buffer, contentType: string, signal: AbortSignal): Promise<string> {
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  const charset = /charset="?([^";\s]+)/i.exec(contentType)?.[1] ?? 'utf-8';
  const textual = type === '' || type.startsWith('text/') || /[/+](json|xml|javascript|ecmascript|yaml)$/.test(type) || type === 'application/xhtml+xml';
  if (!textual) return `(${type} content, ${body.length} bytes: not text, not shown)`;
  let text: string;
  try {
    text = new TextDecoder(charset).decode(body);
  } catch {
    text = new TextDecoder('utf-8').decode(body);
  }
  if (type !== 'text/html' && type !== 'application/xhtml+xml') return text;
  try {
    return await htmlToMarkdown(text, signal);
  } catch (e) {
    return `(this HTML could not be turned into Markdown: ${(e as Error)?.message ?? String(e)}; it follows as it came)\n\n${text}`;
  }
}
