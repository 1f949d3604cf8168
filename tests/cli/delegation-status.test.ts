/**
 * `openboa status <parent>` lists its children, and a child waiting for a
 * person is shown with the command that answers it; `openboa confirm
 * <child> ...` answers it as for any session.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import YAML from 'yaml';
import { SessionStore } from '../../src/core/store/session-store.js';
import { createSession } from '../../src/core/ops/create-session.js';
import { wake } from '../../src/core/run/wake.js';
import type { Runtime } from '../../src/core/run/run-context.js';
import { tempHome } from '../helpers/home.js';
import { testDeps } from '../helpers/deps.js';
import { queuedModel } from '../helpers/queued-model.js';
import { MemorySandbox } from '../../src/core/sandbox/memory-sandbox.js';
import { cliInProcess } from '../helpers/cli.js';

test('status of a parent lists its children and how to answer one waiting for a person', async (t) => {
  const h = tempHome(t);
  const agent = (extra: Record<string, unknown>) => YAML.stringify({ provider: 'anthropic', model: 'unit-model', environment: 'local', ...extra });
  h.write('agents/boss/agent.yaml', agent({ delegates: ['worker'] }));
  h.write('agents/worker/agent.yaml', agent({ tools: { bash: { permission: 'always_ask' } } }));
  const model = queuedModel([
    { tools: [{ name: 'spawn_session', input: { agent: 'worker', message: 'clean up', title: 'cleanup' } }] },
    { text: 'spawned' },
    { tools: [{ name: 'bash', input: { command: 'rm -rf build' } }] },
  ]);
  const deps = { ...testDeps({}), models: model.registry, sandbox: () => new MemorySandbox({ exec: () => '' }) };
  const store = new SessionStore(h.home, deps);
  const rt: Runtime = { home: h.home, store, deps };
  const parent = createSession(store, { agent: 'boss' }).id;
  store.appendUserEvent(parent, { type: 'user.message', content: [{ type: 'text', text: 'start' }] });
  await wake(rt, parent);
  const child = store.listIds().find((x) => x !== parent)!;
  const r = await wake(rt, child);
  assert.equal(r.stop_reason?.type, 'requires_action');
  const use = store.snapshot(child).open_tool_uses[0]!.id;

  const out = await cliInProcess(['status', parent], { home: h.root });
  assert.equal(out.code, 0, out.stderr);
  assert.match(out.stdout, /children {3}1: 1 waiting for a person/);
  assert.match(out.stdout, new RegExp(`  ${child}  worker  requires_action  "cleanup"`));
  assert.match(out.stdout, new RegExp(`${use}  bash: openboa confirm ${child} ${use} --allow\\|--deny`));
  const json = JSON.parse((await cliInProcess(['status', parent, '--json'], { home: h.root })).stdout);
  assert.deepEqual(json.children_status.map((c: { session_id: string; status: string }) => [c.session_id, c.status]), [[child, 'requires_action']]);

  const confirmed = await cliInProcess(['confirm', child, use, '--allow'], { home: h.root });
  assert.equal(confirmed.code, 0, confirmed.stderr);
  const after = await cliInProcess(['status', parent], { home: h.root });
  assert.match(after.stdout, /children {3}1: 0 waiting for a person/);
});
