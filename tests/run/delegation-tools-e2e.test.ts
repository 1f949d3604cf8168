/**
 * The delegation tools end to end: the real SDK against the scripted
 * Messages API server, the real store and loop. A parent spawns a child,
 * the child reads its task and writes to its parent with message_parent,
 * and every line on both logs validates against the SDK's event schema.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import YAML from 'yaml';
import { bench, textOf, toolResults } from '../helpers/run.js';
import { validateLog } from '../helpers/event-schema.js';

test('spawn_session and message_parent through the SDK: the task reaches the child, its message the parent', async (t) => {
  const b = await bench(t, {
    steps: [
      { toolUses: [{ id: 'toolu_spawn', name: 'spawn_session', input: { agent: 'worker', message: 'Summarise the README.', title: 'summary' } }] },
      { text: 'Spawned a worker.' },
      { toolUses: [{ id: 'toolu_note', name: 'message_parent', input: { message: 'Started on the README.' } }] },
      { text: 'The README says hello.' },
    ],
  });
  const yaml = (extra: Record<string, unknown>) => YAML.stringify({ provider: 'anthropic', model: 'fake-model', system: 'test', environment: 'local', ...extra });
  b.h.write('agents/boss/agent.yaml', yaml({ delegates: ['worker'] }));
  b.h.write('agents/worker/agent.yaml', yaml({}));
  const parent = b.session('Get the README summarised.', 'boss');
  assert.equal((await b.wake(parent)).stop_reason?.type, 'end_turn');
  const spawned = toolResults(b.fake.requests[1]!).get('toolu_spawn')!;
  assert.equal(spawned.isError, false);
  const child = /spawned session (\S+)/.exec(spawned.text)![1]!;
  assert.equal(b.store.snapshot(child).parent_session_id, parent);

  assert.equal((await b.wake(child)).stop_reason?.type, 'end_turn');
  const childFirst = b.fake.requests[2]!.body;
  assert.equal(textOf(childFirst.messages[0]!.content), 'Summarise the README.');
  assert.ok(childFirst.tools!.some((x: { name: string }) => x.name === 'message_parent'));
  assert.ok(!childFirst.tools!.some((x: { name: string }) => x.name === 'spawn_session'));

  const types = b.events(parent).map((e) => e.type);
  // The message_parent, then the report of the child's run (its last message and how it ended).
  assert.deepEqual(types.filter((x) => x.includes('thread')), ['session.thread_created', 'agent.thread_message_sent', 'agent.thread_message_received', 'agent.thread_message_received', 'session.thread_status_idle']);
  const got = b.events(parent).find((e) => e.type === 'agent.thread_message_received');
  assert.equal(got && 'content' in got ? textOf(got.content) : null, 'Started on the README.');
  assert.deepEqual(b.store.snapshot(parent).pending_events.map((p) => p.type), ['agent.thread_message_received', 'agent.thread_message_received', 'session.thread_status_idle']);
  for (const id of [parent, child]) assert.deepEqual(validateLog(b.store.paths(id).events).errors, []);
});
