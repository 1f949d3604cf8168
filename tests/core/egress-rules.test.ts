/** The allow list and the address rules the egress proxy and web_fetch share. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AllowList, hostKey } from '../../src/core/egress/allow-list.js';
import { addressProblem, specialRange } from '../../src/core/egress/address-rules.js';
import { resolveDestination } from '../../src/core/egress/destination.js';
import type { ResolvedAddress } from '../../src/core/egress/network-port.js';
import { EnvironmentDefinition } from '../../src/core/schema/index.js';

const list = (allowed_hosts: string[], extra: Record<string, unknown> = {}) => AllowList.of(EnvironmentDefinition.parse({ network: 'limited', allowed_hosts, ...extra }));

test('allowed_hosts: exact names, wildcards of subdomains only, ports, and one canonical form of a name', () => {
  const a = list(['api.example.com', '*.cdn.example.com', 'example.org:8443', '[2001:db8::1]:443', 'xn--bcher-kva.example']);
  assert.deepEqual(a.check('api.example.com', 443), { ok: true });
  assert.deepEqual(a.check('api.example.com', 80), { ok: true });
  assert.match((a.check('api.example.com', 22) as { reason: string }).reason, /port 22 of api\.example\.com is not allowed/);
  assert.deepEqual(a.check('x.y.cdn.example.com', 443), { ok: true });
  assert.equal(a.check('cdn.example.com', 443).ok, false);
  assert.equal(a.check('evilcdn.example.com', 443).ok, false);
  assert.deepEqual(a.check('example.org', 8443), { ok: true });
  assert.equal(a.check('example.org', 443).ok, false);
  assert.deepEqual(a.check('2001:db8::1', 443), { ok: true });
  assert.equal(hostKey('API.Example.COM.'), 'api.example.com');
  assert.equal(hostKey('bücher.example'), 'xn--bcher-kva.example');
  assert.deepEqual(a.check(hostKey('BÜCHER.example.')!, 443), { ok: true });
  assert.equal(hostKey('[2001:DB8:0::1]'), '2001:db8::1');
  // numeric forms some resolvers read as addresses are not names
  for (const odd of ['0x7f.1', '2130706433', '127.1', 'a b', 'x%25eth0', 'user@host']) assert.equal(hostKey(odd), null, odd);
});

test('package managers and MCP servers join the list only when asked; none allows nothing; host allows any name', () => {
  assert.equal(list([]).check('registry.npmjs.org', 443).ok, false);
  assert.deepEqual(list([], { allow_package_managers: true }).check('registry.npmjs.org', 443), { ok: true });
  assert.deepEqual(list([], { allow_package_managers: true }).check('de.archive.ubuntu.com', 80), { ok: true });
  const mcp = [{ name: 'search', url: 'https://mcp.search.test:8443/mcp' }] as never;
  assert.deepEqual(AllowList.of(EnvironmentDefinition.parse({ network: 'limited', allow_mcp_servers: true }), mcp).check('mcp.search.test', 8443), { ok: true });
  assert.equal(AllowList.of(EnvironmentDefinition.parse({ network: 'limited' }), mcp).check('mcp.search.test', 8443).ok, false);
  assert.match((AllowList.of(EnvironmentDefinition.parse({})).check('example.com', 443) as { reason: string }).reason, /network: none/);
  assert.deepEqual(AllowList.of(EnvironmentDefinition.parse({ network: 'host' })).check('anything.test', 22), { ok: true });
});

test('the allow list is refused outside limited, and a bad entry names itself', () => {
  const r = EnvironmentDefinition.safeParse({ network: 'host', allowed_hosts: ['a.test'] });
  assert.equal(r.success, false);
  assert.match(JSON.stringify(r.error?.issues), /allowed_hosts applies only to network: limited/);
  const bad = EnvironmentDefinition.safeParse({ network: 'limited', allowed_hosts: ['http://a.test/'] });
  assert.equal(bad.success, false);
  assert.match(JSON.stringify(bad.error?.issues), /expected host, \*\.domain or \[ipv6\]/);
  assert.equal(EnvironmentDefinition.safeParse({ network: 'limited', allowed_hosts: ['a.test:70000'] }).success, false);
});

test('special addresses are refused unless listed exactly; mapped IPv6 forms too; own ports always', () => {
  for (const a of ['127.0.0.1', '169.254.169.254', '10.1.2.3', '172.16.0.1', '192.168.1.1', '100.64.0.1', '0.0.0.0', '::1', '::', 'fe80::1', 'fd00::1', '::ffff:127.0.0.1', '::ffff:a9fe:a9fe', '64:ff9b::7f00:1', '224.0.0.1']) {
    assert.notEqual(specialRange(a), null, a);
  }
  for (const a of ['93.184.216.34', '2606:4700::1111']) assert.equal(specialRange(a), null, a);
  const listed = { allow: list(['10.0.0.5:5432', '127.0.0.1']), ownPorts: new Set([4100]) };
  assert.equal(addressProblem('10.0.0.5', 5432, listed), null);
  assert.match(addressProblem('10.0.0.6', 5432, listed)!, /a private address/);
  assert.match(addressProblem('::ffff:10.0.0.6', 5432, listed)!, /a private address/);
  assert.equal(addressProblem('127.0.0.1', 8080, listed), null);
  assert.match(addressProblem('127.0.0.1', 4100, listed)!, /daemon's own ports/);
  assert.match(addressProblem('::ffff:127.0.0.1', 4100, listed)!, /daemon's own ports/);
});

test('a name with several addresses: the connection goes to one that passed, never to a refused one', async () => {
  const rules = (addresses: string[]) => ({ allow: list(['multi.test']), ownPorts: new Set<number>(), resolve: async (): Promise<ResolvedAddress[]> => addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })) });
  const mixed = await resolveDestination('multi.test', 443, rules(['127.0.0.1', '169.254.169.254', '93.184.216.34']));
  assert.deepEqual(mixed, { ok: true, host: 'multi.test', port: 443, address: '93.184.216.34', family: 4 });
  const allPrivate = await resolveDestination('multi.test', 443, rules(['10.0.0.1', '::1']));
  assert.equal(allPrivate.ok, false);
  assert.match((allPrivate as { reason: string }).reason, /10\.0\.0\.1 is a private address.*; ::1 is a loopback address/);
});

test('an address with a zone id from the resolver is refused, not thrown', async () => {
  // Node's isIP takes "fe80::1%eth0"; the URL parser that reads IPv6 addresses does not.
  for (const address of ['fe80::1%lo', '2606:4700::1%eth0']) {
    const d = await resolveDestination('scoped.test', 443, { allow: list(['scoped.test']), ownPorts: new Set<number>(), resolve: async () => [{ address, family: 6 as const }] });
    assert.equal(d.ok, false, address);
    assert.match((d as { reason: string }).reason, /has a zone id/);
  }
});
