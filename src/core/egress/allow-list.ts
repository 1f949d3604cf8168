/**
 * Which destinations an environment lets out, by name and port, before any
 * name is resolved: `network: limited`'s `allowed_hosts`, plus the package
 * managers' hosts and the agent's HTTP MCP servers when the environment
 * asks for them. `network: host` allows every name (the address rules of
 * address-rules.ts still apply to what the daemon itself connects to);
 * `network: none` allows nothing.
 *
 * Names are compared in one canonical form (hostKey): ASCII (an IDN
 * becomes its xn-- form), lower case, no trailing dot; an IP literal in
 * the form node:net prints it (IPv6 without brackets, compressed).
 */
import net from 'node:net';
import { domainToASCII } from 'node:url';
import type { EnvironmentDefinition, McpServer } from '../schema/index.js';
import { PACKAGE_MANAGER_HOSTS } from './package-hosts.js';

/** Ports an entry without a port allows: the web's. */
export const DEFAULT_PORTS: readonly number[] = [80, 443];

interface Entry {
  /** The canonical name or address; for a wildcard, the domain after `*.`. */
  host: string;
  wildcard: boolean;
  /** null: DEFAULT_PORTS. */
  port: number | null;
  /** Where it came from, for the refusal's wording and the docs. */
  source: 'allowed_hosts' | 'allow_package_managers' | 'allow_mcp_servers';
}

export type Verdict = { ok: true } | { ok: false; reason: string };

/**
 * The canonical form of a host as a client sent it, or null when it is no
 * host at all (empty, spaces, a `%` zone, a name that IDNA refuses).
 */
export function hostKey(raw: string): string | null {
  let h = raw.trim();
  if (h.startsWith('[') && h.endsWith(']')) h = h.slice(1, -1);
  if (h === '' || /[\s/\\%@]/.test(h)) return null;
  if (net.isIPv6(h)) return canonicalV6(h);
  if (net.isIPv4(h)) return h;
  if (h.endsWith('.')) h = h.slice(0, -1);
  const ascii = domainToASCII(h);
  if (ascii === '' || ascii.length > 253) return null;
  // A name that only looks numeric (010.1, 0x7f.1, 2130706433) is an address to some resolvers: never a name here.
  if (/^[0-9.]+$/.test(ascii) || /^0x/i.test(ascii) || /\.0x[0-9a-f]*$/i.test(ascii)) return null;
  return ascii.toLowerCase();
}

function canonicalV6(h: string): string {
  // The URL parser prints an IPv6 address compressed and in lower case.
  return new URL(`http://[${h}]/`).hostname.slice(1, -1);
}

export class AllowList {
  private constructor(
    private readonly entries: readonly Entry[],
    /** network: host: every name passes (the address rules still hold). */
    readonly anyHost: boolean,
  ) {}

  static none(): AllowList {
    return new AllowList([], false);
  }

  /** The allow list of an environment, with the agent's MCP servers for allow_mcp_servers. */
  static of(def: Pick<EnvironmentDefinition, 'network' | 'allowed_hosts' | 'allow_package_managers' | 'allow_mcp_servers'>, mcpServers: readonly McpServer[] = []): AllowList {
    if (def.network === 'none') return AllowList.none();
    if (def.network === 'host') return new AllowList([], true);
    const entries: Entry[] = def.allowed_hosts.map((h) => parseEntry(h, 'allowed_hosts'));
    if (def.allow_package_managers) entries.push(...PACKAGE_MANAGER_HOSTS.map((h) => parseEntry(h, 'allow_package_managers')));
    if (def.allow_mcp_servers) {
      for (const s of mcpServers) {
        if (!('url' in s)) continue;
        const u = new URL(s.url);
        const port = u.port ? Number(u.port) : u.protocol === 'https:' ? 443 : 80;
        const host = hostKey(u.hostname);
        if (host) entries.push({ host, wildcard: false, port, source: 'allow_mcp_servers' });
      }
    }
    return new AllowList(entries, false);
  }

  /** Whether a canonical host (hostKey) and port may be asked for. */
  check(host: string, port: number): Verdict {
    if (this.anyHost) return { ok: true };
    if (this.entries.length === 0) return { ok: false, reason: 'this environment allows no network (network: none)' };
    let nameMatched = false;
    for (const e of this.entries) {
      const nameOk = e.wildcard ? host.endsWith(`.${e.host}`) : host === e.host;
      if (!nameOk) continue;
      nameMatched = true;
      if (e.port === null ? DEFAULT_PORTS.includes(port) : e.port === port) return { ok: true };
    }
    if (nameMatched) return { ok: false, reason: `port ${port} of ${host} is not allowed (an allowed_hosts entry without a port allows ${DEFAULT_PORTS.join(' and ')}; name the port, e.g. "${host}:${port}")` };
    return { ok: false, reason: `${host} is not in this environment's allowed_hosts` };
  }

  /**
   * Whether the environment names this exact address (an IP literal in
   * allowed_hosts): only then may a private, loopback or link-local
   * address be connected to.
   */
  listsAddress(address: string): boolean {
    const key = hostKey(address);
    return this.entries.some((e) => !e.wildcard && e.source === 'allowed_hosts' && e.host === key);
  }
}

function parseEntry(raw: string, source: Entry['source']): Entry {
  // "[v6]:port", "name:port", or no port (an unbracketed IPv6 address is not an entry: schema/network.ts).
  const m = /^(.*):(\d{1,5})$/.exec(raw);
  const rest = m ? (m[1] as string) : raw;
  const port = m ? Number(m[2]) : null;
  const wildcard = rest.startsWith('*.');
  const host = hostKey(wildcard ? rest.slice(2) : rest);
  if (host === null) throw new Error(`allowed host ${JSON.stringify(raw)} is not a host name or address`);
  return { host, wildcard, port, source };
}
