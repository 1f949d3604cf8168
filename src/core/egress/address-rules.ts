/**
 * Which resolved addresses the daemon refuses to connect to on the agent's
 * behalf, whatever name led there (a listed name that resolves to
 * 127.0.0.1 is DNS rebinding, not permission): loopback, link-local (the
 * cloud metadata address 169.254.169.254), private and shared ranges,
 * multicast and the reserved ones. An address the environment lists
 * exactly (an IP literal in allowed_hosts) is let through, except to the
 * daemon's own ports on this machine, which are never reachable.
 */
import net from 'node:net';
import os from 'node:os';
import type { AllowList } from './allow-list.js';

const V4: ReadonlyArray<[string, number, string]> = [
  ['0.0.0.0', 8, 'an unspecified address'],
  ['10.0.0.0', 8, 'a private address'],
  ['100.64.0.0', 10, 'a shared (carrier-grade NAT) address'],
  ['127.0.0.0', 8, 'a loopback address'],
  ['169.254.0.0', 16, 'a link-local address (the cloud metadata service lives there)'],
  ['172.16.0.0', 12, 'a private address'],
  ['192.0.0.0', 24, 'a reserved address'],
  ['192.0.2.0', 24, 'a documentation address'],
  ['192.168.0.0', 16, 'a private address'],
  ['198.18.0.0', 15, 'a benchmarking address'],
  ['198.51.100.0', 24, 'a documentation address'],
  ['203.0.113.0', 24, 'a documentation address'],
  ['224.0.0.0', 4, 'a multicast address'],
  ['240.0.0.0', 4, 'a reserved address'],
];

const V6: ReadonlyArray<[string, number, string]> = [
  ['::', 128, 'an unspecified address'],
  ['::1', 128, 'a loopback address'],
  ['64:ff9b::', 96, 'a NAT64 address'],
  ['64:ff9b:1::', 48, 'a NAT64 address'],
  ['100::', 64, 'a discard address'],
  ['2001:db8::', 32, 'a documentation address'],
  ['2002::', 16, 'a 6to4 address'],
  ['fc00::', 7, 'a private (unique local) address'],
  ['fe80::', 10, 'a link-local address'],
  ['fec0::', 10, 'a site-local address'],
  ['ff00::', 8, 'a multicast address'],
];

const v4Rules = V4.map(([a, bits, why]) => {
  const b = new net.BlockList();
  b.addSubnet(a, bits, 'ipv4');
  return { b, why };
});
const v6Rules = V6.map(([a, bits, why]) => {
  const b = new net.BlockList();
  b.addSubnet(a, bits, 'ipv6');
  return { b, why };
});

/** Why an address is special (one of the ranges above), or null for a public one. */
export function specialRange(address: string): string | null {
  const family = net.isIPv4(address) ? 'ipv4' : net.isIPv6(address) ? 'ipv6' : null;
  if (family === null) return 'not an IP address';
  if (family === 'ipv6') {
    const mapped = mappedV4(address);
    if (mapped !== null) return specialRange(mapped);
    for (const r of v6Rules) if (r.b.check(address, 'ipv6')) return r.why;
    return null;
  }
  for (const r of v4Rules) if (r.b.check(address, 'ipv4')) return r.why;
  return null;
}

/** The IPv4 address inside an IPv4-mapped (::ffff:a.b.c.d) or IPv4-compatible (::a.b.c.d) IPv6 address. */
function mappedV4(address: string): string | null {
  const full = new URL(`http://[${address}]/`).hostname.slice(1, -1);
  const m = /^::(?:ffff:)?([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(full);
  if (!m) return null;
  const hi = parseInt(m[1] as string, 16);
  const lo = parseInt(m[2] as string, 16);
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

/** This machine's own addresses: every interface's, loopback included. */
function localAddresses(): Set<string> {
  const out = new Set<string>(['127.0.0.1', '::1', '0.0.0.0', '::']);
  for (const list of Object.values(os.networkInterfaces())) for (const i of list ?? []) out.add(i.address);
  return out;
}

export interface AddressRules {
  allow: AllowList;
  /** The daemon's own listening ports (Deps.network.ownPorts): never reachable on this machine's addresses. */
  ownPorts: ReadonlySet<number>;
}

/** Why connecting to address:port is refused, or null when it may be connected to. */
export function addressProblem(address: string, port: number, rules: AddressRules): string | null {
  const v4 = net.isIPv6(address) ? mappedV4(address) : null;
  const plain = v4 ?? address;
  if (rules.ownPorts.has(port) && (specialRange(plain) !== null || localAddresses().has(plain))) {
    return `${address}:${port} is one of the daemon's own ports`;
  }
  const special = specialRange(address);
  if (special === null) return null;
  if (rules.allow.listsAddress(address) || (v4 !== null && rules.allow.listsAddress(v4))) return null;
  return `${address} is ${special}; only an address listed exactly in allowed_hosts may be reached there`;
}
