import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadAgent, loadEnvironment, loadScript, listAgents } from '../../src/core/definitions/definitions.js';
import { OpenboaError } from '../../src/core/foundation/errors.js';
import { tempHome } from '../helpers/home.js';

function rejects(fn: () => unknown, code: string, re: RegExp) {
  try {
    fn();
  } catch (e) {
    assert.ok(OpenboaError.is(e), `expected an OpenboaError, got ${String(e)}`);
    assert.equal(e.code, code);
    assert.match(e.message, re);
    return e.message;
  }
  assert.fail('expected an error');
}

test('the bundled home loads: demo (scripted), claude (anthropic), local', (t) => {
  const h = tempHome(t);
  assert.deepEqual(listAgents(h.home), ['claude', 'demo']);
  const demo = loadAgent(h.home, 'demo');
  assert.equal(demo.def.provider, 'scripted');
  assert.ok(demo.instructions?.includes('/workspace'));
  assert.ok(loadScript(h.home, demo).turns.length > 3);
  const claude = loadAgent(h.home, 'claude');
  assert.equal(claude.def.provider, 'anthropic');
  assert.equal(claude.def.limits.max_model_requests_per_wake, 12);
  const local = loadEnvironment(h.home, 'local');
  assert.equal(local.def.network, 'none');
  assert.equal(local.def.shell.timeout_seconds, 120);
});

test('defaults fill what an agent.yaml leaves out', (t) => {
  const h = tempHome(t, { bundled: false });
  h.write('agents/min/agent.yaml', 'system: hi\n');
  const a = loadAgent(h.home, 'min');
  assert.equal(a.def.provider, 'anthropic');
  assert.equal(a.def.environment, 'local');
  assert.equal(a.def.limits.max_output_tokens, 8192);
  assert.equal(a.def.limits.session_token_budget, null);
  assert.deepEqual(a.def.custom_tools, []);
  assert.equal(a.instructions, null);
});

test('a missing agent or environment file is not_found, naming the file', (t) => {
  const h = tempHome(t, { bundled: false });
  rejects(() => loadAgent(h.home, 'ghost'), 'not_found', /agent "ghost" not found: agents\/ghost\/agent\.yaml does not exist/);
  rejects(() => loadEnvironment(h.home, 'ghost'), 'not_found', /environments\/ghost\.yaml does not exist/);
});

test('a YAML syntax error names the file, line and column', (t) => {
  const h = tempHome(t, { bundled: false });
  h.write('agents/bad/agent.yaml', 'system: hi\nlimits:\n  max_wake_seconds: [1,\n');
  rejects(() => loadAgent(h.home, 'bad'), 'invalid_input', /^agents\/bad\/agent\.yaml:\d+:\d+: YAML syntax error: /);
  h.write('environments/dup.yaml', 'network: none\nnetwork: host\n');
  rejects(() => loadEnvironment(h.home, 'dup'), 'invalid_input', /^environments\/dup\.yaml:2:\d+: YAML syntax error: Map keys must be unique/);
});

test('a wrong type names the file, line and field path', (t) => {
  const h = tempHome(t, { bundled: false });
  h.write('agents/typed/agent.yaml', 'system: hi\nlimits:\n  max_wake_seconds: soon\n');
  rejects(() => loadAgent(h.home, 'typed'), 'invalid_input', /^agents\/typed\/agent\.yaml:3: limits\.max_wake_seconds: .*expected number/);
  h.write('environments/net.yaml', 'network: internet\n');
  rejects(() => loadEnvironment(h.home, 'net'), 'invalid_input', /^environments\/net\.yaml:1: network: .*"none"\|"host"/);
  h.write('agents/perm/agent.yaml', 'tools:\n  bash: { permission: sometimes }\n');
  rejects(() => loadAgent(h.home, 'perm'), 'invalid_input', /tools\.bash\.permission: /);
});

test('an unknown field is rejected by name', (t) => {
  const h = tempHome(t, { bundled: false });
  h.write('agents/typo/agent.yaml', 'system: hi\nlimts:\n  max_wake_seconds: 5\n');
  rejects(() => loadAgent(h.home, 'typo'), 'invalid_input', /^agents\/typo\/agent\.yaml:2: limts: unknown field "limts"/);
  h.write('environments/typo.yaml', 'shell:\n  timeout: 5\n');
  rejects(() => loadEnvironment(h.home, 'typo'), 'invalid_input', /^environments\/typo\.yaml:2: shell\.timeout: unknown field "timeout"/);
});

test('a scripted agent needs a script; a secret needs an env name; custom tools cannot shadow built-ins', (t) => {
  const h = tempHome(t, { bundled: false });
  h.write('agents/s/agent.yaml', 'provider: scripted\n');
  rejects(() => loadAgent(h.home, 's'), 'invalid_input', /script: expected a script file/);
  h.write('environments/sec.yaml', 'env:\n  TOKEN: { secret: { env: "not a name" } }\n');
  rejects(() => loadEnvironment(h.home, 'sec'), 'invalid_input', /env\.TOKEN/);
  h.write('agents/c/agent.yaml', 'custom_tools:\n  - { name: bash, description: x, input_schema: { type: object } }\n');
  rejects(() => loadAgent(h.home, 'c'), 'invalid_input', /custom_tools\.0\.name: tool name "bash" is already taken/);
});

test('an invalid agent id is refused before touching the disk', (t) => {
  const h = tempHome(t, { bundled: false });
  rejects(() => loadAgent(h.home, '../etc'), 'invalid_input', /not a valid agent id/);
});

test('max_output_tokens: 8192 by default, a quarter of a smaller window, and never the whole window (an error naming the field)', (t) => {
  const h = tempHome(t);
  h.write('agents/big/agent.yaml', 'provider: anthropic\n');
  h.write('agents/small/agent.yaml', 'provider: openai\nmodel: qwen\nbase_url: http://127.0.0.1:1/v1\nlimits:\n  context_window_tokens: 8000\n');
  h.write('agents/set/agent.yaml', 'provider: anthropic\nlimits:\n  context_window_tokens: 8000\n  max_output_tokens: 5000\n');
  h.write('agents/bad/agent.yaml', 'provider: anthropic\nlimits:\n  context_window_tokens: 8000\n  max_output_tokens: 8192\n');
  assert.equal(loadAgent(h.home, 'big').def.limits.max_output_tokens, 8192);
  assert.equal(loadAgent(h.home, 'small').def.limits.max_output_tokens, 2000);
  assert.equal(loadAgent(h.home, 'set').def.limits.max_output_tokens, 5000);
  rejects(() => loadAgent(h.home, 'bad'), 'invalid_input', /agents\/bad\/agent\.yaml:\d+: limits\.max_output_tokens: expected less than limits\.context_window_tokens \(8000\)/);
});
