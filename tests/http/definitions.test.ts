/**
 * /v1/agents and /v1/environments driven by the official SDK over HTTP, in
 * a temp home: what the client reads and what the YAML files then hold.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import Anthropic, { APIError } from '@anthropic-ai/sdk';
import { Hono } from 'hono';
import { serve } from '@hono/node-server';
import YAML from 'yaml';
import { definitionRoutes } from '../../src/http/definition-routes.js';
import { apiErrorResponse } from '../../src/http/api-error.js';
import { SessionStore } from '../../src/core/store/session-store.js';
import { tempHome, type TempHome } from '../helpers/home.js';
import { testDeps } from '../helpers/deps.js';

interface Served {
  h: TempHome;
  client: Anthropic;
  /** Requests the server saw, by method and path. */
  seen: string[];
}

async function served(t: TestContext): Promise<Served> {
  const h = tempHome(t);
  const deps = testDeps();
  const rt = { home: h.home, store: new SessionStore(h.home, deps), deps };
  const seen: string[] = [];
  const app = new Hono();
  app.use(async (c, next) => {
    seen.push(`${c.req.method} ${new URL(c.req.url).pathname}`);
    await next();
  });
  app.route('/v1', definitionRoutes(rt));
  app.onError((e) => apiErrorResponse(e));
  const server = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 });
  await new Promise<void>((resolve) => server.once('listening', resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const { port } = server.address() as AddressInfo;
  // maxRetries as the SDK's default: a refusal that says x-should-retry: false must be sent once.
  const client = new Anthropic({ apiKey: 'test', baseURL: `http://127.0.0.1:${port}`, maxRetries: 2 });
  return { h, client, seen };
}

async function apiError(p: Promise<unknown>, status: number): Promise<APIError> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof APIError, `expected an APIError, got ${String(e)}`);
    assert.equal(e.status, status, e.message);
    return e;
  }
  assert.fail(`expected HTTP ${status}`);
}

test('agents: create, retrieve, update, list, archive through the SDK, the YAML keeping its comments', async (t) => {
  const { h, client } = await served(t);
  const created = await client.beta.agents.create({
    name: 'Code Reviewer',
    model: 'fake-model',
    system: 'Review code.',
    metadata: { team: 'infra' },
    tools: [
      { type: 'agent_toolset_20260401', configs: [{ name: 'bash', permission_policy: { type: 'always_ask' } }, { name: 'write', enabled: false }] },
      { type: 'custom', name: 'lookup', description: 'Look up a thing', input_schema: { type: 'object', properties: { id: { type: 'string' } } } },
    ],
  });
  assert.equal(created.id, 'code-reviewer');
  assert.equal(created.version, 1);
  assert.equal(created.name, 'Code Reviewer');
  assert.deepEqual(created.model, { id: 'fake-model' });
  assert.deepEqual(created.metadata, { team: 'infra' });
  const file = path.join(h.root, 'agents/code-reviewer/agent.yaml');
  const yaml = YAML.parse(fs.readFileSync(file, 'utf8'));
  assert.deepEqual(yaml.tools, { bash: { permission: 'always_ask' }, write: { permission: 'disabled' } });
  assert.equal(yaml.custom_tools[0].name, 'lookup');

  // A person's comment and a field the API does not speak survive an update.
  fs.writeFileSync(file, `# reviewed by hand\n${fs.readFileSync(file, 'utf8')}limits:\n  max_wake_seconds: 30 # short\n`);
  const seen = await client.beta.agents.retrieve('code-reviewer');
  assert.equal(seen.version, 2, 'the hand edit is a version');
  const updated = await client.beta.agents.update('code-reviewer', { version: 2, description: 'Reviews diffs', metadata: { team: null, tier: 'gold' } });
  assert.equal(updated.version, 3);
  assert.equal(updated.description, 'Reviews diffs');
  assert.deepEqual(updated.metadata, { tier: 'gold' });
  const text = fs.readFileSync(file, 'utf8');
  assert.match(text, /^# reviewed by hand\n/);
  assert.match(text, /max_wake_seconds: 30 # short/);
  assert.match(text, /description: Reviews diffs/);

  const ids = [];
  for await (const a of client.beta.agents.list()) ids.push(a.id);
  assert.deepEqual(ids, ['claude', 'code-reviewer', 'demo']);

  const archived = await client.beta.agents.archive('code-reviewer');
  assert.ok(archived.archived_at);
  assert.equal(archived.version, 3);
  const after = [];
  for await (const a of client.beta.agents.list()) after.push(a.id);
  assert.deepEqual(after, ['claude', 'demo']);
  const all = [];
  for await (const a of client.beta.agents.list({ include_archived: true })) all.push(a.id);
  assert.deepEqual(all, ['claude', 'code-reviewer', 'demo']);
  const e = await apiError(client.beta.agents.update('code-reviewer', { description: 'x' }), 400);
  assert.match(e.message, /archived/);
});

test('environments: create, update, list, archive through the SDK', async (t) => {
  const { h, client } = await served(t);
  const env = await client.beta.environments.create({ name: 'Open net', config: { type: 'cloud', networking: { type: 'unrestricted' } }, description: 'with network' });
  assert.equal(env.id, 'open-net');
  assert.deepEqual(env.config.type === 'cloud' && env.config.networking, { type: 'unrestricted' });
  assert.equal(YAML.parse(fs.readFileSync(path.join(h.root, 'environments/open-net.yaml'), 'utf8')).network, 'host');
  const again = await client.beta.environments.create({ name: 'Open net' });
  assert.equal(again.id, 'open-net-2', 'a taken id gets a suffix');
  const upd = await client.beta.environments.update('open-net', { config: { type: 'cloud', networking: { type: 'limited' } }, name: 'Closed net' });
  assert.equal(upd.name, 'Closed net');
  assert.deepEqual(upd.config.type === 'cloud' && upd.config.networking, { type: 'limited', allowed_hosts: [], allow_mcp_servers: false, allow_package_managers: false });
  assert.equal((upd as unknown as { version: number }).version, 2);
  await client.beta.environments.archive('open-net-2');
  const ids = [];
  for await (const e of client.beta.environments.list()) ids.push(e.id);
  assert.deepEqual(ids, ['local', 'open-net']);
  const e = await apiError(client.beta.environments.create({ name: 'x', config: { type: 'cloud', networking: { type: 'limited', allowed_hosts: ['example.com'] } } }), 400);
  assert.match(e.message, /networking\.allowed_hosts/);
});

test('list pages with a cursor: limit, next_page, every agent once', async (t) => {
  const { client } = await served(t);
  for (let i = 0; i < 5; i++) await client.beta.agents.create({ name: `a${i}`, model: 'fake-model' });
  const first = await client.beta.agents.list({ limit: 3 });
  assert.deepEqual(first.data.map((a) => a.id), ['a0', 'a1', 'a2']);
  assert.ok(first.next_page);
  assert.ok(first.hasNextPage());
  const second = await first.getNextPage();
  assert.deepEqual(second.data.map((a) => a.id), ['a3', 'a4', 'claude']);
  const ids = [];
  for await (const a of client.beta.agents.list({ limit: 2 })) ids.push(a.id);
  assert.deepEqual(ids, ['a0', 'a1', 'a2', 'a3', 'a4', 'claude', 'demo']);
  await apiError(client.beta.agents.list({ page: 'not-a-cursor' }), 400);
});

test('an update from a stale version is refused with 409, sent once', async (t) => {
  const { client, seen } = await served(t);
  await client.beta.agents.create({ name: 'x', model: 'fake-model' });
  await client.beta.agents.update('x', { version: 1, system: 'one' });
  const before = seen.length;
  const e = await apiError(client.beta.agents.update('x', { version: 1, system: 'two' }), 409);
  assert.equal(e.headers?.get('x-should-retry'), 'false');
  assert.match(e.message, /version 2, not 1/);
  assert.deepEqual(seen.slice(before), ['POST /v1/agents/x'], 'the SDK did not retry the conflict');
  assert.equal((await client.beta.agents.retrieve('x')).system, 'one');
});

test('bad input: 400 naming the field; unknown id 404; traversal and symlinks refused', async (t) => {
  const { h, client } = await served(t);
  let e = await apiError(client.beta.agents.create({ name: 'x', model: 'fake-model', tools: [{ type: 'custom', name: 'bad name!', description: 'd', input_schema: { type: 'object' } }] }), 400);
  assert.match(e.message, /tools\.0\.name/);
  e = await apiError(client.beta.agents.create({ name: 'x', model: 'fake-model', skills: [{ type: 'anthropic', skill_id: 'xlsx' }] }), 400);
  assert.match(e.message, /skills: skills are not supported/);
  e = await apiError(client.beta.agents.create({ name: 'x', model: 'fake-model', typo: 1 } as never), 400);
  assert.match(e.message, /body: unknown field \\+"typo/);
  e = await apiError(client.beta.agents.update('demo', { system: 'x', model: '' }), 400);
  assert.match(e.message, /model/);
  // A change the schema of agent.yaml refuses names the file and the field.
  e = await apiError(client.beta.agents.update('demo', { tools: [{ type: 'custom', name: 'bash', description: 'd', input_schema: { type: 'object' } }] }), 400);
  assert.match(e.message, /agents\/demo\/agent\.yaml.*custom_tools\.0\.name/);
  assert.ok(!fs.existsSync(path.join(h.root, 'agents/x')), 'a refused create leaves nothing behind');

  await apiError(client.beta.agents.retrieve('nobody'), 404);
  await apiError(client.beta.environments.update('nowhere', { description: 'x' }), 404);
  e = await apiError(client.beta.agents.retrieve('../environments'), 400);
  assert.match(e.message, /agent_id/);
  await apiError(client.beta.agents.retrieve('..%2F..%2Fetc'), 400);

  // A symlinked agent folder and a symlinked environment file, pointing outside the home.
  const outside = fs.mkdtempSync(path.join(path.dirname(h.root), 'openboa-outside-'));
  t.after(() => fs.rmSync(outside, { recursive: true, force: true }));
  fs.writeFileSync(path.join(outside, 'agent.yaml'), 'model: fake-model\n');
  fs.writeFileSync(path.join(outside, 'env.yaml'), 'network: host\n');
  fs.symlinkSync(outside, path.join(h.root, 'agents/linked'));
  fs.symlinkSync(path.join(outside, 'env.yaml'), path.join(h.root, 'environments/linked.yaml'));
  e = await apiError(client.beta.agents.retrieve('linked'), 400);
  assert.match(e.message, /symlink/);
  e = await apiError(client.beta.environments.update('linked', { description: 'x' }), 400);
  assert.match(e.message, /symlink/);
  assert.equal(fs.readFileSync(path.join(outside, 'env.yaml'), 'utf8'), 'network: host\n', 'nothing written through the link');
  assert.deepEqual(fs.readdirSync(outside).sort(), ['agent.yaml', 'env.yaml']);
});
