/** MCP pieces that need no server: the agent.yaml field, the network rule, the environment a server gets, result text. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AgentDefinition } from '../../src/core/schema/index.js';
import { describeIssues } from '../../src/core/store/parse-line.js';
import { isLoopbackUrl, networkRefusal, serverEnvironment } from '../../src/core/mcp/mcp-connection.js';
import { resultText } from '../../src/core/mcp/mcp-content.js';
import { resolveMcpServers } from '../../src/core/mcp/mcp-hub.js';

const agent = (mcp_servers: unknown) => AgentDefinition.safeParse({ mcp_servers });

test('mcp_servers: defaults (always_ask, 60 s), stdio or HTTP, and clear errors for bad names, duplicates and shapes', () => {
  const ok = agent([{ name: 'fs', command: 'mcp-fs', args: ['--root', '.'] }, { name: 'web-1', url: 'http://127.0.0.1:9000/mcp', headers: { Authorization: { secret: { env: 'WEB_TOKEN' } } }, permission: 'always_allow' }]);
  assert.ok(ok.success, ok.success ? '' : describeIssues(ok.error));
  const [fs, web] = ok.data.mcp_servers;
  assert.deepEqual([fs!.permission, fs!.timeout_seconds, fs!.start_timeout_seconds], ['always_ask', 60, 30]);
  assert.equal(web!.permission, 'always_allow');
  assert.deepEqual(AgentDefinition.parse({}).mcp_servers, []);

  const dup = agent([{ name: 'a', command: 'x' }, { name: 'a', command: 'y' }]);
  assert.ok(!dup.success);
  assert.match(describeIssues(dup.error), /mcp_servers\.1\.name.*used twice/);
  for (const name of ['a__b', 'has space', 'x'.repeat(33), '']) assert.ok(!agent([{ name, command: 'x' }]).success, name);
  assert.ok(!agent([{ name: 'a', command: 'x', url: 'http://127.0.0.1/' }]).success, 'not both');
  assert.ok(!agent([{ name: 'a', url: 'file:///etc/passwd' }]).success, 'http(s) only');
  assert.ok(!agent([{ name: 'a', command: 'x', permission: 'sometimes' }]).success);
  assert.ok(!agent([{ name: 'a', command: 'x', env: { 'BAD NAME': 'v' } }]).success);
});

test('network none allows only loopback MCP URLs (by the literal host); host allows any; stdio servers are not network', () => {
  for (const u of ['http://127.0.0.1:8080/mcp', 'http://localhost/mcp', 'http://[::1]:9/mcp', 'http://127.9.9.9/']) assert.ok(isLoopbackUrl(u), u);
  for (const u of ['http://10.0.0.1/', 'https://example.com/', 'http://127.0.0.1.evil.com/', 'http://localhost.evil.com/', 'http://0.0.0.0/']) assert.ok(!isLoopbackUrl(u), u);
  const far = { name: 'far', url: 'https://example.com/mcp', headers: {}, permission: 'always_ask', timeout_seconds: 60, start_timeout_seconds: 30 } as const;
  assert.match(networkRefusal(far, 'none')!, /network is "none".*example\.com/);
  assert.equal(networkRefusal(far, 'host'), null);
  assert.equal(networkRefusal({ name: 's', command: 'x', args: [], env: {}, permission: 'always_ask', timeout_seconds: 60, start_timeout_seconds: 30 }, 'none'), null);
});

test('a stdio server gets a minimal environment plus its own env, never the daemon\'s secrets; a missing secret stops only its server', () => {
  const daemon = { PATH: '/usr/bin', HOME: '/home/d', ANTHROPIC_API_KEY: 'sk-daemon', AWS_SECRET_ACCESS_KEY: 'aws', BASH_FUNC_x: '() { :; }' };
  assert.deepEqual(serverEnvironment(daemon, { TOKEN: 't' }), { PATH: '/usr/bin', HOME: '/home/d', TOKEN: 't' });
  const r = resolveMcpServers(
    [
      { name: 'a', command: 'x', args: [], env: { T: { secret: { env: 'SET' } }, P: 'plain' }, permission: 'always_ask', timeout_seconds: 60, start_timeout_seconds: 30 },
      { name: 'b', url: 'http://127.0.0.1/', headers: { Authorization: { secret: { env: 'UNSET' } } }, permission: 'always_ask', timeout_seconds: 60, start_timeout_seconds: 30 },
    ],
    { SET: 'v1' },
  );
  assert.deepEqual(r.servers[0]!.values, { T: 'v1', P: 'plain' });
  assert.deepEqual(r.secrets, { SET: 'v1' });
  assert.match(r.problems.get('b')!, /UNSET are not set/);
  assert.equal(r.problems.has('a'), false);
});

test('MCP result content becomes text: text kept, images and blobs named with their size, structured content as JSON', () => {
  assert.equal(resultText({ content: [{ type: 'text', text: 'one' }, { type: 'text', text: 'two' }] }), 'one\n\ntwo');
  assert.equal(resultText({ content: [] }), '(no output)');
  assert.match(resultText({ content: [{ type: 'image', data: 'aGVsbG8=', mimeType: 'image/png' }] }), /^\[image image\/png, 5 bytes: not shown/);
  assert.equal(resultText({ content: [{ type: 'resource', resource: { uri: 'file:///a.txt', mimeType: 'text/plain', text: 'body' } }] }), '[resource file:///a.txt (text/plain)]\nbody');
  assert.match(resultText({ content: [{ type: 'resource', resource: { uri: 'file:///a.bin', blob: 'AAAA' } }] }), /3 bytes of binary data: not shown/);
  assert.match(resultText({ content: [{ type: 'resource_link', uri: 'file:///b', name: 'b' }] }), /resource link file:\/\/\/b \(b\)/);
  assert.equal(resultText({ content: [], structuredContent: { a: 1 } }), '{\n  "a": 1\n}');
});
