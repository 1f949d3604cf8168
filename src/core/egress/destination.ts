/**
 * The one rule every connection the daemon makes for the agent follows
 * (the egress proxy and web_fetch alike): check the name and port against
 * the allow list, resolve the name here (never in the sandbox, never a
 * second time), check every address it resolved to, and hand back the one
 * address to connect to. The caller connects to exactly that address, so
 * what was checked is what is used: a name that resolves to a public
 * address now and to 127.0.0.1 a moment later cannot slip between a check
 * and a connect.
 */
import net from 'node:net';
import { addressProblem, type AddressRules } from './address-rules.js';
import { hostKey } from './allow-list.js';
import type { ResolvedAddress, Resolver } from './network-port.js';

export type Destination = { ok: true; host: string; port: number; address: string; family: 4 | 6 } | { ok: false; host: string; port: number; reason: string };

export interface DestinationRules extends AddressRules {
  resolve: Resolver;
}

/** Where host:port may be reached, or why not. Never throws. */
export async function resolveDestination(rawHost: string, port: number, rules: DestinationRules, signal?: AbortSignal): Promise<Destination> {
  const host = hostKey(rawHost);
  if (host === null) return { ok: false, host: rawHost, port, reason: `${JSON.stringify(rawHost)} is not a host name or address` };
  if (!Number.isInteger(port) || port < 1 || port > 65535) return { ok: false, host, port, reason: `port ${port} is not a TCP port` };
  const verdict = rules.allow.check(host, port);
  if (!verdict.ok) return { ok: false, host, port, reason: verdict.reason };
  let addresses: ResolvedAddress[];
  if (net.isIP(host)) addresses = [{ address: host, family: net.isIPv6(host) ? 6 : 4 }];
  else {
    try {
      addresses = await rules.resolve(host, signal);
    } catch (e) {
      return { ok: false, host, port, reason: `${host} does not resolve (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})` };
    }
  }
  if (addresses.length === 0) return { ok: false, host, port, reason: `${host} does not resolve (no addresses)` };
  // The first address that passes; every refused one is named if none does.
  const problems: string[] = [];
  for (const a of addresses) {
    if (!net.isIP(a.address)) continue;
    // net.isIP takes "fe80::1%eth0"; a zone names an interface of this machine, never a destination on the internet.
    if (a.address.includes('%')) {
      problems.push(`${a.address} has a zone id`);
      continue;
    }
    const problem = addressProblem(a.address, port, rules);
    if (problem === null) return { ok: true, host, port, address: a.address, family: net.isIPv6(a.address) ? 6 : 4 };
    problems.push(problem);
  }
  return { ok: false, host, port, reason: `${host} resolves to ${problems.join('; ') || 'nothing usable'}` };
}
