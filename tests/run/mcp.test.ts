/**
 * Tools from MCP servers, end to end: the real SDK client against the test
 * server (tests/helpers/mcp-test-server.mjs) started on stdio, the scripted
 * Messages API, the real store (docs/mcp.md).
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { bench, toolResults, type Bench } from '../helpers/run.js';
import type { Step, RecordedRequest } from '../helpers/fake-anthropic.js';
import { validateLog } from '../helpers/event-schema.js';
import { REPO, whenExists } from '../helpers/home.js';
import { cliInProcess } from '../helpers/cli.js';
import { startDaemon } from '../helpers/daemon.js';
import type { SessionEvent } from '../../src/core/schema/index.js';
import { MAX_TOOLS_PER_SERVER } from '../../src/core/mcp/mcp-hub.js';
import type { ProbeResult } from '../../src/core/mcp/mcp-probe.js';

const SERVER = path.join(REPO, 'tests', 'helpers', 'mcp-test-server.mjs');
const SECRET = 'mcp-s3cret-value-93a1';

function server(name: string, extra: Record<string, unknown> = {}, args: string[] = []) {
  return { name, command: process.execPath, args: [SERVER, ...args], ...extra };
}

async function mcpBench(t: TestContext, steps: Step[], servers: unknown[], env: NodeJS.ProcessEnv = {}): Promise<Bench> {
  const b = await bench(t, { steps, env: { PATH: process.env.PATH, ...env } });
  b.h.write('agents/test/agent.yaml', YAML.stringify({ provider: 'anthropic', model: 'fake-model', system: 'You are a test agent.', environment: 'local', mcp_servers: servers }));
  return b;
}

const of = <T extends SessionEvent['type']>(ev: SessionEvent[], type: T) => ev.filter((e): e is Extract<SessionEvent, { type: T }> => e.type === type);

/** Whether a process is alive (a zombie waiting for its reaper counts as gone). */
function alive(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

function unmarked(v: unknown): string {
  return JSON.stringify(JSON.parse(JSON.stringify(v), (k, x) => (k === 'cache_control' ? undefined : x)));
}

/** Whether `later` repeats `earlier` (tools, system, every message) as its prefix, byte for byte. */
function repeats(earlier: RecordedRequest['raw'], later: RecordedRequest['raw']): string | null {
  if (unmarked(earlier.tools) !== unmarked(later.tools)) return 'tools differ';
  if (unmarked(earlier.system) !== unmarked(later.system)) return 'system differs';
  for (let i = 0; i < earlier.messages.length; i++) if (unmarked(earlier.messages[i]) !== unmarked(later.messages[i])) return `message ${i} differs`;
  return null;
}

test('MCP tools are offered sorted as mcp__<server>__<tool>; an always_ask call waits for openboa confirm, runs, and is logged', async (t) => {
  const b = await mcpBench(
    t,
    [
      { text: 'Echoing.', toolUses: [{ id: 'toolu_m1', name: 'mcp__srv__echo', input: { text: 'hello' } }] },
      { text: 'Done.' },
      { text: 'And again.' },
    ],
    [server('srv')],
  );
  const id = b.session('use the server');
  const r1 = await b.wake(id);
  assert.equal(r1.stop_reason?.type, 'requires_action');
  const tools = b.fake.requests[0]!.body.tools!.map((x) => x.name);
  const mcp = tools.filter((n) => n.startsWith('mcp__'));
  assert.deepEqual(mcp, ['mcp__srv__crash', 'mcp__srv__echo', 'mcp__srv__env', 'mcp__srv__hang', 'mcp__srv__picture', 'mcp__srv__slow'], 'sorted, and bad.name left out');
  assert.ok(tools.includes('bash'), 'the built-ins are still there');
  const echo = b.fake.requests[0]!.body.tools!.find((x) => x.name === 'mcp__srv__echo')!;
  assert.deepEqual(echo.input_schema, { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] });
  assert.equal(echo.description, 'Echoes text back.');

  const [use] = of(b.events(id), 'agent.mcp_tool_use');
  assert.ok(use);
  assert.deepEqual({ name: use.name, server: use.mcp_server_name, input: use.input, perm: use.evaluated_permission }, { name: 'echo', server: 'srv', input: { text: 'hello' }, perm: 'ask' });
  assert.deepEqual(r1.stop_reason, { type: 'requires_action', event_ids: [use.id] });

  // runtime/tools.json lists the server's tools, and the one left out with why
  const listed = JSON.parse(fs.readFileSync(path.join(b.store.paths(id).runtime, 'tools.json'), 'utf8')) as Array<Record<string, unknown>>;
  const echoEntry = listed.find((e) => e.name === 'mcp__srv__echo')!;
  assert.deepEqual([echoEntry.kind, echoEntry.mcp_server_name, echoEntry.permission, echoEntry.offered], ['mcp', 'srv', 'always_ask', true]);
  assert.match(String(listed.find((e) => e.name === 'mcp__srv__bad.name')?.left_out), /not a tool name/);

  const c = await cliInProcess(['confirm', id, use.id, '--allow'], { home: b.h.root });
  assert.equal(c.code, 0, c.stderr);
  const r2 = await b.wake(id);
  assert.deepEqual(r2.stop_reason, { type: 'end_turn' });
  const ev = b.events(id);
  const [res] = of(ev, 'agent.mcp_tool_result');
  assert.deepEqual({ id: res?.mcp_tool_use_id, content: res?.content, err: res?.is_error }, { id: use.id, content: [{ type: 'text', text: 'echo: hello' }], err: false });
  assert.equal(toolResults(b.fake.requests[1]!).get('toolu_m1')?.text, 'echo: hello');
  // the call as the model made it, rebuilt from the log in the next run
  const assistant = b.fake.requests[1]!.body.messages[1]!;
  assert.deepEqual(assistant.content, [{ type: 'text', text: 'Echoing.' }, { type: 'tool_use', id: 'toolu_m1', name: 'mcp__srv__echo', input: { text: 'hello' } }]);

  // a third run rebuilds the whole conversation, MCP call and result included, byte for byte
  b.store.appendUserEvent(id, { type: 'user.message', content: 'once more' });
  await b.wake(id);
  assert.equal(repeats(b.fake.requests[1]!.raw, b.fake.requests[2]!.raw), null);
  assert.deepEqual(validateLog(b.store.paths(id).events).errors, []);
});

test('always_allow runs at once; a secret in env reaches the server but not the log, runtime/ or the model; an image is named, not inlined', async (t) => {
  const b = await mcpBench(
    t,
    [
      { toolUses: [{ id: 'toolu_e', name: 'mcp__box__env', input: { name: 'TOKEN' } }, { id: 'toolu_p', name: 'mcp__box__picture', input: {} }, { id: 'toolu_x', name: 'mcp__box__nope', input: {} }] },
      { text: 'ok' },
    ],
    [server('box', { permission: 'always_allow', env: { TOKEN: { secret: { env: 'MCP_TEST_TOKEN' } }, PLAIN: 'visible', LEAK_IN_DESCRIPTION: '1' } })],
    { MCP_TEST_TOKEN: SECRET },
  );
  const id = b.session('go');
  const r = await b.wake(id);
  assert.deepEqual(r.stop_reason, { type: 'end_turn' });
  const res = toolResults(b.fake.requests[1]!);
  assert.equal(res.get('toolu_e')?.text, '[REDACTED:MCP_TEST_TOKEN]', 'the server had the secret; the model sees its mark');
  const described = b.fake.requests[0]!.body.tools!.find((x) => x.name === 'mcp__box__env')!.description;
  assert.equal(described, 'The value of one of its environment variables. Token: [REDACTED:MCP_TEST_TOKEN]', 'a secret in a tool definition is redacted too');
  assert.match(res.get('toolu_p')!.text, /^a red dot\n\n\[image image\/png, 16 bytes: not shown/);
  assert.equal(res.get('toolu_x')?.isError, true);
  assert.match(res.get('toolu_x')!.text, /the MCP server box offers no tool named "nope"/);
  const uses = of(b.events(id), 'agent.mcp_tool_use');
  assert.deepEqual(uses.map((u) => [u.name, u.evaluated_permission]), [['env', 'allow'], ['picture', 'allow'], ['nope', 'deny']]);
  for (const f of b.allFiles()) assert.ok(!f.text.includes(SECRET), `the secret is in ${f.file}`);
  for (const q of b.fake.requests) assert.ok(!JSON.stringify(q.raw).includes(SECRET), 'the secret never reaches the model');
  assert.deepEqual(validateLog(b.store.paths(id).events).errors, []);
});

test('a server that cannot start is a session.error naming it; the run goes on with the other tools and servers', async (t) => {
  const b = await mcpBench(
    t,
    [
      { toolUses: [{ id: 'toolu_b', name: 'mcp__broken__echo', input: { text: 'x' } }, { id: 'toolu_g', name: 'mcp__good__echo', input: { text: 'y' } }] },
      { text: 'carried on' },
    ],
    [server('broken', { permission: 'always_allow' }, ['--fail-start']), server('good', { permission: 'always_allow' }), { name: 'missing', command: '/nonexistent/mcp-server' }],
  );
  const id = b.session('go');
  const r = await b.wake(id);
  assert.deepEqual(r.stop_reason, { type: 'end_turn' });
  const errors = of(b.events(id), 'session.error');
  const byServer = new Map(errors.map((e) => [String((e.error as Record<string, unknown>).mcp_server_name), e.error]));
  assert.equal(byServer.get('broken')?.type, 'mcp_connection_failed_error');
  assert.match(byServer.get('broken')!.message, /MCP server broken did not start: .*exited with code 3.*refusing to start/s);
  assert.match(byServer.get('missing')!.message, /MCP server missing did not start: .*(ENOENT|No such file)/);
  const offered = b.fake.requests[0]!.body.tools!.map((x) => x.name);
  assert.ok(offered.includes('mcp__good__echo') && offered.includes('bash'));
  assert.ok(!offered.some((n) => n.startsWith('mcp__broken__')));
  const res = toolResults(b.fake.requests[1]!);
  assert.equal(res.get('toolu_b')?.isError, true);
  assert.match(res.get('toolu_b')!.text, /the MCP server broken is not available in this run: .*exited with code 3/);
  assert.equal(res.get('toolu_g')?.text, 'echo: y');
  const listed = JSON.parse(fs.readFileSync(path.join(b.store.paths(id).runtime, 'tools.json'), 'utf8')) as Array<Record<string, unknown>>;
  assert.match(String(listed.find((e) => e.name === 'mcp__broken__*')?.error), /exited with code 3/);
  assert.deepEqual(validateLog(b.store.paths(id).events).errors, []);
});

test('a call that hangs past timeout_seconds, and a server that crashes, are error results and session.errors; the run goes on', async (t) => {
  const b = await mcpBench(
    t,
    [
      { toolUses: [{ id: 'toolu_h', name: 'mcp__slowpoke__hang', input: {} }] },
      { toolUses: [{ id: 'toolu_c', name: 'mcp__slowpoke__crash', input: {} }] },
      { toolUses: [{ id: 'toolu_a', name: 'mcp__slowpoke__echo', input: { text: 'still there?' } }] },
      { text: 'gave up on it' },
    ],
    [server('slowpoke', { permission: 'always_allow', timeout_seconds: 0.5 })],
  );
  const id = b.session('go');
  const r = await b.wake(id);
  assert.deepEqual(r.stop_reason, { type: 'end_turn' });
  assert.match(toolResults(b.fake.requests[1]!).get('toolu_h')!.text, /did not answer within 0.5 s/);
  assert.match(toolResults(b.fake.requests[2]!).get('toolu_c')!.text, /stopped during the call: .*exited with code 7/);
  assert.match(toolResults(b.fake.requests[3]!).get('toolu_a')!.text, /not running/);
  const errors = of(b.events(id), 'session.error').map((e) => e.error);
  assert.deepEqual(errors.map((e) => [e.type, (e as Record<string, unknown>).mcp_server_name]), [['mcp_connection_failed_error', 'slowpoke'], ['mcp_connection_failed_error', 'slowpoke']], 'one for the timeout, one for the crash (not one per call after it)');
  assert.deepEqual(validateLog(b.store.paths(id).events).errors, []);
});

test('an interrupt during a slow MCP call ends the run at once and kills the server with what it started', async (t) => {
  const pidFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'openboa-mcp-')), 'pids.json');
  t.after(() => fs.rmSync(path.dirname(pidFile), { recursive: true, force: true }));
  const b = await mcpBench(t, [{ toolUses: [{ id: 'toolu_s', name: 'mcp__srv__slow', input: { ms: 600_000 } }] }], [server('srv', { permission: 'always_allow', env: { MCP_TEST_PID_FILE: pidFile } })]);
  const id = b.session('wait');
  const td = await startDaemon(t, b);
  await whenExists(pidFile, (s) => s.includes('child'));
  const pids = JSON.parse(fs.readFileSync(pidFile, 'utf8')) as { server: number; child: number };
  assert.ok(alive(pids.server) && alive(pids.child));
  const ended = td.result((x) => x.session_id === id && x.outcome === 'executed');
  const t0 = Date.now();
  fs.appendFileSync(b.store.paths(id).events, '{"type":"user.interrupt","reason":"stop"}\n');
  const r = await ended;
  assert.ok(Date.now() - t0 < 10_000, `idle after ${Date.now() - t0} ms`);
  assert.deepEqual(r.stop_reason, { type: 'end_turn' });
  const [res] = of(b.events(id), 'agent.mcp_tool_result');
  assert.equal(res?.is_error, true);
  assert.equal(b.fake.requests.length, 1, 'no model call after the interrupt');
  // SIGKILL was sent before the run ended; the kernel takes a moment to finish the processes off.
  for (let i = 0; i < 250 && (alive(pids.server) || alive(pids.child)); i++) await new Promise((r) => setTimeout(r, 20));
  assert.equal(alive(pids.server), false, 'the server is gone');
  assert.equal(alive(pids.child), false, 'what it started is gone too');
  assert.deepEqual(validateLog(b.store.paths(id).events).errors, []);
});

test('a server listing thousands of tools or a huge schema is capped: the request stays bounded and tools.json says what was left out', async (t) => {
  const b = await mcpBench(t, [{ text: 'ok' }], [server('lots', {}, ['--many-tools', '3000', '--big-schema'])]);
  const id = b.session('go');
  await b.wake(id);
  const mcp = b.fake.requests[0]!.body.tools!.filter((x) => x.name.startsWith('mcp__'));
  assert.equal(mcp.length, MAX_TOOLS_PER_SERVER);
  assert.ok(JSON.stringify(b.fake.requests[0]!.body.tools).length < 200_000, 'the tool definitions stay small');
  const listed = JSON.parse(fs.readFileSync(path.join(b.store.paths(id).runtime, 'tools.json'), 'utf8')) as Array<Record<string, unknown>>;
  assert.match(String(listed.find((e) => e.name === 'mcp__lots__huge')?.left_out), /input schema is \d+ characters, over 16000/);
  assert.match(String(listed.find((e) => e.name === 'mcp__lots__t00099')?.left_out), /over 100 tools from one server/);
  const lots = listed.filter((e) => e.mcp_server_name === 'lots' && !e.offered);
  assert.ok(lots.length <= 53, `tools.json lists at most 50 left out one by one (${lots.length})`);
  assert.match(JSON.stringify(lots), /more than 1000 tools.*the rest were not read/);
  assert.match(JSON.stringify(lots), /and \d+ more left out/);
});

test('openboa agents shows each agent\'s MCP servers and whether they start, without their secrets', async (t) => {
  const b = await mcpBench(t, [], [server('good', { env: { TOKEN: { secret: { env: 'MCP_TEST_TOKEN' } } } }), server('broken', {}, ['--fail-start']), { name: 'far', url: 'https://mcp.example.com/mcp' }]);
  const env = { MCP_TEST_TOKEN: SECRET };
  const r = await cliInProcess(['agents'], { home: b.h.root, env });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /MCP SERVERS/);
  assert.match(r.stdout, /\ntest\s+anthropic\s+fake-model\s+local\s+good \(7 tools\), broken \(fails\), far \(fails\)/);
  assert.match(r.stdout, /agent test: MCP server broken does not start: .*exited with code 3/);
  assert.match(r.stdout, /agent test: MCP server far does not start: the environment's network is "none", which allows only loopback/);
  const json = JSON.parse((await cliInProcess(['agents', '--json'], { home: b.h.root, env })).stdout);
  const test = json.agents.find((a: { id: string }) => a.id === 'test');
  assert.deepEqual(test.mcp_servers.map((s: ProbeResult) => [s.name, s.transport, s.permission, s.started, s.tools]), [['good', 'stdio', 'always_ask', true, 7], ['broken', 'stdio', 'always_ask', false, 0], ['far', 'http', 'always_ask', false, 0]]);
  assert.ok(!r.stdout.includes(SECRET) && !JSON.stringify(json).includes(SECRET));
});

/** A Streamable HTTP MCP server on 127.0.0.1 (stateless), with one tool that tells the Authorization header it got. */
async function startHttpServer(t: TestContext): Promise<string> {
  const http = await import('node:http');
  const { Server } = await import('@modelcontextprotocol/sdk/server/index.js');
  const { StreamableHTTPServerTransport } = await import('@modelcontextprotocol/sdk/server/streamableHttp.js');
  const { CallToolRequestSchema, ListToolsRequestSchema } = await import('@modelcontextprotocol/sdk/types.js');
  const srv = http.createServer(async (req, res) => {
    const auth = String(req.headers.authorization ?? '');
    const mcp = new Server({ name: 'http-test', version: '1' }, { capabilities: { tools: {} } });
    mcp.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [{ name: 'whoami', description: 'The Authorization header.', inputSchema: { type: 'object' } }] }));
    mcp.setRequestHandler(CallToolRequestSchema, async () => ({ content: [{ type: 'text', text: `auth=${auth}` }] }));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => void transport.close());
    await mcp.connect(transport);
    await transport.handleRequest(req, res);
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  t.after(() => new Promise<void>((r) => (srv.closeAllConnections(), srv.close(() => r()))));
  return `http://127.0.0.1:${(srv.address() as { port: number }).port}/mcp`;
}

test('a Streamable HTTP server on loopback works under network: none; its secret header reaches it but not the log', async (t) => {
  const url = await startHttpServer(t);
  const b = await mcpBench(
    t,
    [{ toolUses: [{ id: 'toolu_w', name: 'mcp__web__whoami', input: {} }] }, { text: 'ok' }],
    [{ name: 'web', url, headers: { Authorization: { secret: { env: 'WEB_AUTH' } } }, permission: 'always_allow' }, { name: 'far', url: 'https://mcp.example.com/mcp' }],
    { WEB_AUTH: `Bearer ${SECRET}` },
  );
  const id = b.session('go');
  const r = await b.wake(id);
  assert.deepEqual(r.stop_reason, { type: 'end_turn' });
  assert.equal(toolResults(b.fake.requests[1]!).get('toolu_w')?.text, 'auth=[REDACTED:WEB_AUTH]');
  const far = of(b.events(id), 'session.error').find((e) => (e.error as Record<string, unknown>).mcp_server_name === 'far');
  assert.match(far!.error.message, /network is "none", which allows only loopback/);
  for (const f of b.allFiles()) assert.ok(!f.text.includes(SECRET), `the secret is in ${f.file}`);
  assert.deepEqual(validateLog(b.store.paths(id).events).errors, []);
});

test('a confirmed call whose server does not start in the next run gets an error result, not a hang', async (t) => {
  const b = await mcpBench(t, [{ toolUses: [{ id: 'toolu_q', name: 'mcp__srv__echo', input: { text: 'later' } }] }, { text: 'noted' }], [server('srv')]);
  const id = b.session('go');
  const [use] = (await b.wake(id), of(b.events(id), 'agent.mcp_tool_use'));
  assert.equal(use?.evaluated_permission, 'ask');
  // the operator breaks the server before confirming
  b.h.write('agents/test/agent.yaml', YAML.stringify({ provider: 'anthropic', model: 'fake-model', environment: 'local', mcp_servers: [server('srv', {}, ['--fail-start'])] }));
  assert.equal((await cliInProcess(['confirm', id, use.id, '--allow'], { home: b.h.root })).code, 0);
  const r = await b.wake(id);
  assert.deepEqual(r.stop_reason, { type: 'end_turn' });
  const res = toolResults(b.fake.requests[1]!).get('toolu_q')!;
  assert.equal(res.isError, true);
  assert.match(res.text, /not run: the MCP server srv is not available in this run: .*exited with code 3/);
  const [logged] = of(b.events(id), 'agent.mcp_tool_result');
  assert.equal(logged?.mcp_tool_use_id, use.id);
  assert.deepEqual(validateLog(b.store.paths(id).events).errors, []);
});

test('a Streamable HTTP server that floods a response is cut off past 16 MB: an error result, a session.error naming it, bounded memory', async (t) => {
  const http = await import('node:http');
  const { Server } = await import('@modelcontextprotocol/sdk/server/index.js');
  const { StreamableHTTPServerTransport } = await import('@modelcontextprotocol/sdk/server/streamableHttp.js');
  const { CallToolRequestSchema, ListToolsRequestSchema } = await import('@modelcontextprotocol/sdk/types.js');
  let written = 0;
  let cut = false;
  const srv = http.createServer(async (req, res) => {
    let raw = '';
    for await (const d of req) raw += d;
    const body = raw ? JSON.parse(raw) : undefined;
    if (body?.method === 'tools/call') {
      // One JSON body that never ends.
      res.writeHead(200, { 'content-type': 'application/json' });
      res.on('close', () => (cut = true));
      const piece = Buffer.alloc(256 * 1024, 'x');
      while (!res.destroyed && written < 512 * 1024 * 1024) {
        written += piece.length;
        if (!res.write(piece)) await new Promise((r) => (res.once('drain', r), res.once('close', r)));
      }
      res.end();
      return;
    }
    const mcp = new Server({ name: 'flood', version: '1' }, { capabilities: { tools: {} } });
    mcp.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [{ name: 'flood', description: 'Answers forever.', inputSchema: { type: 'object' } }] }));
    mcp.setRequestHandler(CallToolRequestSchema, async () => ({ content: [] }));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => void transport.close());
    await mcp.connect(transport);
    await transport.handleRequest(req, res, body);
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  t.after(() => new Promise<void>((r) => (srv.closeAllConnections(), srv.close(() => r()))));
  const url = `http://127.0.0.1:${(srv.address() as { port: number }).port}/mcp`;
  const b = await mcpBench(t, [{ toolUses: [{ id: 'toolu_f', name: 'mcp__hose__flood', input: {} }] }, { text: 'ok' }], [{ name: 'hose', url, permission: 'always_allow' }]);
  const id = b.session('go');
  const rss0 = process.memoryUsage().rss;
  const r = await b.wake(id);
  assert.deepEqual(r.stop_reason, { type: 'end_turn' });
  assert.ok(cut, 'the connection was cut');
  assert.ok(written < 64 * 1024 * 1024, `the server got to write ${written} bytes`);
  assert.ok(process.memoryUsage().rss - rss0 < 256 * 1024 * 1024, 'memory stayed bounded');
  const result = toolResults(b.fake.requests[1]!).get('toolu_f');
  assert.equal(result?.isError, true);
  assert.match(result?.text ?? '', /cut off: the server sent a message over 16777216 bytes/);
  const err = of(b.events(id), 'session.error').find((e) => (e.error as Record<string, unknown>).mcp_server_name === 'hose');
  assert.match(err!.error.message, /MCP server hose, tool flood: .*cut off/);
  assert.deepEqual(validateLog(b.store.paths(id).events).errors, []);
});
