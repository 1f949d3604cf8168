/** The model is a port: Deps.models says which provider an agent's `provider` names. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bench } from '../helpers/run.js';
import type { ModelProvider, ModelRequest } from '../../src/core/model/provider.js';

test('a registered provider answers the run; an unregistered one is a definition that does not load', async (t) => {
  const b = await bench(t);
  const seen: ModelRequest[] = [];
  const inProcess: ModelProvider = {
    name: 'in-process',
    async complete(req) {
      seen.push(req);
      return { content: [{ type: 'text', text: 'from the registry' }], stop_reason: 'end_turn', usage: { input_tokens: 1, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 }, stop_details: null };
    },
  };
  b.deps.models = { anthropic: () => inProcess };
  const id = b.session('hello');
  const r = await b.wake(id);
  assert.deepEqual(r.stop_reason, { type: 'end_turn' });
  assert.equal(seen.length, 1);
  assert.equal(b.fake.requests.length, 0, 'the HTTP provider was not used');
  assert.ok(b.events(id).some((e) => e.type === 'agent.message' && e.content[0]?.text === 'from the registry'));

  b.deps.models = {};
  b.store.appendUserEvent(id, { type: 'user.message', content: 'again' });
  const r2 = await b.wake(id);
  assert.equal(r2.failure?.code, 'invalid_definition');
  assert.match(r2.failure!.message, /no model provider "anthropic" is registered/);
});
