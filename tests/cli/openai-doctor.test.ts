/** The CLI with openai agents: doctor (where each sends its requests, a missing key by its variable's name), agents, and a wake by the built binary. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cli, cliInProcess } from '../helpers/cli.js';
import { startFakeOpenAI } from '../helpers/fake-openai.js';
import { tempHome } from '../helpers/home.js';

interface Doctor {
  checks: Array<{ name: string; status: string; message: string }>;
}

test('doctor: an openai agent without its named secret fails by name; a local endpoint without a key is fine; the key is never printed', async (t) => {
  const h = tempHome(t);
  h.write('agents/gpt/agent.yaml', 'provider: openai\nmodel: gpt-4.1\napi_key: { secret: { env: MY_OPENAI_KEY } }\n');
  h.write('agents/llama/agent.yaml', 'provider: openai\nmodel: llama3\nbase_url: http://127.0.0.1:11434/v1\n');
  const env = { ANTHROPIC_API_KEY: 'k', OPENAI_API_KEY: '', OPENAI_BASE_URL: '' };
  const missing = await cliInProcess(['doctor', '--json'], { home: h.root, env });
  assert.equal(missing.code, 0, 'the others can run: a key missing from this shell is a warning');
  const m = (JSON.parse(missing.stdout) as Doctor).checks.find((c) => c.name === 'models')!;
  assert.equal(m.status, 'warn');
  assert.match(m.message, /gpt: no API key: agent\.yaml api_key names the secret MY_OPENAI_KEY, which is not set in the environment of this shell: a daemon started from this shell could not run gpt/);
  const ok = await cliInProcess(['doctor', '--json'], { home: h.root, env: { ...env, MY_OPENAI_KEY: 'sk-never-printed' } });
  const c = (JSON.parse(ok.stdout) as Doctor).checks.find((x) => x.name === 'models')!;
  assert.equal(c.status, 'ok');
  assert.match(c.message, /gpt: → https:\/\/api\.openai\.com\/v1 with MY_OPENAI_KEY; llama: → http:\/\/127\.0\.0\.1:11434\/v1 without a key/);
  assert.ok(!ok.stdout.includes('sk-never-printed'));
  const agents = await cliInProcess(['agents'], { home: h.root, env });
  assert.match(agents.stdout, /llama/);
  assert.match(agents.stdout, /openai/);
});

test('the built openboa binary runs an openai agent (the SDK loaded from node_modules) and prints its answer', async (t) => {
  const h = tempHome(t);
  const oai = await startFakeOpenAI([{ text: 'hello from the binary' }]);
  t.after(() => oai.close());
  h.write('agents/local/agent.yaml', `provider: openai\nmodel: llama3\nbase_url: ${oai.url}\n`);
  const env = { OPENAI_API_KEY: '', OPENAI_BASE_URL: '' };
  const made = await cli(['session', 'create', '--agent', 'local', '--json'], { home: h.root, env });
  assert.equal(made.code, 0, made.stderr);
  const id = (JSON.parse(made.stdout) as { id: string }).id;
  assert.equal((await cli(['send', id, 'hi'], { home: h.root, env })).code, 0);
  const woke = await cli(['wake', id], { home: h.root, env });
  assert.equal(woke.code, 0, woke.stderr);
  assert.equal(oai.requests.length, 1);
  const log = await cli(['events', id], { home: h.root, env });
  assert.equal(log.code, 0, log.stderr);
  assert.match(log.stdout, /hello from the binary/);
});
