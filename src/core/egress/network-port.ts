/**
 * The network port of Deps: how the daemon resolves a name on the agent's
 * behalf, and which ports are its own. Tests resolve with a table (a
 * listed name that resolves to 127.0.0.1 or 169.254.169.254), since
 * /etc/hosts cannot change per test.
 */
import dns from 'node:dns';

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/**
 * Every address a name resolves to, in the resolver's order. Rejects when
 * the name does not resolve. Called only for names, never for IP literals.
 */
export type Resolver = (host: string, signal?: AbortSignal) => Promise<ResolvedAddress[]>;

export interface NetworkPort {
  resolve: Resolver;
  /**
   * The daemon's own listening ports (its HTTP API, its metrics): the
   * daemon adds a port here when it binds it. Never reachable through the
   * egress proxy or web_fetch on this machine's addresses, whatever the
   * environment lists.
   */
  ownPorts: Set<number>;
}

/** The system's resolver (getaddrinfo, as every other program of the machine resolves). */
export const systemResolver: Resolver = async (host) => {
  const all = await dns.promises.lookup(host, { all: true, verbatim: true });
  return all.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
};

export function systemNetwork(): NetworkPort {
  return { resolve: systemResolver, ownPorts: new Set() };
}
