/**
 * `--listen HOST:PORT` (or a bare PORT, on 127.0.0.1): checked up front, and
 * whether the address is loopback (only then may the server start without a
 * configured key: a key generated into the home is for this machine's users).
 */
import net from 'node:net';

export const DEFAULT_LISTEN = '127.0.0.1:7410';

export interface ListenAddress {
  host: string;
  port: number;
  loopback: boolean;
}

export function parseListen(text: string): ListenAddress {
  const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d{1,5})$/.exec(text) ?? /^()()(\d{1,5})$/.exec(text);
  const port = m ? Number(m[3]) : NaN;
  const host = m ? (m[1] ?? m[2] ?? '') || '127.0.0.1' : '';
  if (!m || !(port >= 0 && port <= 65_535) || (host !== 'localhost' && net.isIP(host) === 0)) {
    throw new Error(`--listen: expected HOST:PORT with an IP address or localhost (e.g. ${DEFAULT_LISTEN}, [::1]:7410, 0.0.0.0:7410), got ${JSON.stringify(text)}`);
  }
  return { host, port, loopback: isLoopback(host) };
}

export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || (net.isIPv4(host) && host.startsWith('127.'));
}
