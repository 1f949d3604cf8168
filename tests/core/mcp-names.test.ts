/**
 * MCP tool names that could collide: servers `a` (tool `_echo`) and `a_`
 * (tool `echo`) would both offer mcp__a___echo. The schema refuses such
 * server names; the hub, should two servers offer one name anyway, offers
 * neither; a call is routed by the names offered, never by splitting at `__`.
 */
import { mcpToolSource } from '../../src/core/mcp/mcp-service.js';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { AgentDefinition } from '../../src/core/schema/index.js';
import { describeIssues } from '../../src/core/store/parse-line.js';
import { McpHub, resolveMcpServers } from '../../src/core/mcp/mcp-hub.js';
import { ToolCatalog } from '../../src/core/tools/catalog.js';
import type { McpServer } from '../../src/core/schema/index.js';

const SERVER = path.join(import.meta.dirname, '..', 'helpers', 'mcp-test-server.mjs');

test('a server name may not start or end with "_"; a custom tool may not be named mcp__…', () => {
  for (const name of ['a_', '_a', '_']) {
    const r = AgentDefinition.safeParse({ mcp_servers: [{ name, command: 'x' }] });
    assert.ok(!r.success, name);
    assert.match(describeIssues(r.error), /mcp_servers\.0\.name.*start or end with "_"/);
  }
  assert.ok(AgentDefinition.safeParse({ mcp_servers: [{ name: 'a_b-c', command: 'x' }] }).success);
  const custom = AgentDefinition.safeParse({ custom_tools: [{ name: 'mcp__a__echo', description: 'd', input_schema: { type: 'object' } }] });
  assert.ok(!custom.success);
  assert.match(describeIssues(custom.error), /custom_tools\.0\.name.*starts with "mcp__"/);
});

test('two servers offering one full name: neither is offered, both are listed as left out, and a call of it is refused', async (t) => {
  const def = (name: string, permission: 'always_allow' | 'always_ask', prefix: string): McpServer => ({ name, command: process.execPath, args: [SERVER, '--tool-prefix', prefix], env: {}, permission, timeout_seconds: 30, start_timeout_seconds: 30 });
  // Built past the schema, as a hand-edited or older definition could be.
  const hub = new McpHub(resolveMcpServers([def('a', 'always_allow', '_'), def('a_', 'always_ask', ''), def('b', 'always_ask', '')], { PATH: process.env.PATH }), { daemonEnv: { PATH: process.env.PATH }, cwd: process.cwd(), network: 'none' });
  t.after(() => hub.killAll());
  assert.deepEqual(await hub.start(new AbortController().signal), []);
  // Every tool of `a` is `_<x>` and every tool of `a_` is `<x>`: all of them are mcp__a___<x>.
  assert.deepEqual(hub.tools.filter((x) => x.server !== 'b'), [], 'no colliding name is offered');
  assert.match(hub.serverState('a')!.left_out.find((l) => l.tool === '_echo')?.why ?? '', /mcp__a___echo is also offered by the MCP server\(s\) a_;/);
  assert.match(hub.serverState('a_')!.left_out.find((l) => l.tool === 'echo')?.why ?? '', /is also offered by the MCP server\(s\) a;/);
  const catalog = new ToolCatalog(AgentDefinition.parse({}), { hasSkills: false, mcp: mcpToolSource(hub) });
  assert.equal(catalog.evaluate('mcp__a___echo').kind, 'deny', 'never run, least of all unapproved');
  assert.equal(catalog.offered.filter((d) => d.name.startsWith('mcp__a')).length, 0, 'the request has no duplicate names');
  // A call is routed by the names offered: b's echo goes to b, as always_ask.
  assert.deepEqual(catalog.evaluate('mcp__b__echo'), { kind: 'ask', permission: 'ask', mcp: { server: 'b', tool: 'echo' } });
  assert.deepEqual(hub.target('mcp__b__nothing'), { server: 'b', tool: 'nothing' });
  assert.equal(hub.target('mcp__c__echo'), null);
});

test('a loopback HTTP server without a secret header on network: host is warned about', async () => {
  const { loopbackWarning } = await import('../../src/core/mcp/mcp-probe.js');
  const http = (headers: Record<string, unknown>): McpServer => ({ name: 'web', url: 'http://127.0.0.1:9000/mcp', headers: headers as never, permission: 'always_ask', timeout_seconds: 60, start_timeout_seconds: 30 });
  assert.match(loopbackWarning(http({}), 'host') ?? '', /shell can reach this loopback server directly/);
  assert.match(loopbackWarning(http({ Authorization: 'Bearer plain-in-yaml' }), 'host') ?? '', /secret header/);
  assert.equal(loopbackWarning(http({ Authorization: { secret: { env: 'T' } } }), 'host'), null);
  assert.equal(loopbackWarning(http({}), 'none'), null);
  assert.equal(loopbackWarning({ ...http({}), url: 'https://mcp.example.com/' } as McpServer, 'host'), null);
});
