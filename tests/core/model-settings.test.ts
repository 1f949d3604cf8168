import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadAgent } from '../../src/core/definitions/definitions.js';
import { OpenboaError } from '../../src/core/foundation/errors.js';
import { describeEvent } from '../../src/core/views/event-view.js';
import { chooseModel } from '../../src/core/run/model-choice.js';
import { thinkingParam } from '../../src/core/model/thinking.js';
import type { ModelRequest } from '../../src/core/model/provider.js';
import { AgentDefinition, thinkingBudget, type SessionEvent } from '../../src/core/schema/index.js';
import { tempHome } from '../helpers/home.js';

function definitionError(t: Parameters<typeof tempHome>[0], yaml: string): string {
  const h = tempHome(t, { bundled: false });
  h.write('agents/a/agent.yaml', yaml);
  try {
    loadAgent(h.home, 'a');
  } catch (e) {
    assert.ok(OpenboaError.is(e), `expected an OpenboaError, got ${String(e)}`);
    assert.equal(e.code, 'invalid_input');
    return e.message;
  }
  return assert.fail('expected the definition to be refused');
}

test('thinking, fallback_model and fallback_after: defaults, tiers and budgets', (t) => {
  const d = AgentDefinition.parse({});
  assert.equal(d.thinking, 'off');
  assert.equal(d.fallback_after, 2);
  assert.equal(d.fallback_model, undefined);
  assert.equal(thinkingBudget('off'), null);
  assert.equal(thinkingBudget('low'), 2048);
  assert.equal(thinkingBudget('medium'), 8192);
  assert.equal(thinkingBudget('high'), 16384);
  assert.equal(thinkingBudget(1024), 1024);
  const h = tempHome(t, { bundled: false });
  h.write('agents/a/agent.yaml', 'system: hi\nthinking: off\nfallback_model: claude-haiku-4-5\nfallback_after: 3\n');
  const a = loadAgent(h.home, 'a');
  assert.equal(a.def.thinking, 'off', 'YAML "off" is the string, not a boolean');
  assert.equal(a.def.fallback_model, 'claude-haiku-4-5');
  assert.equal(a.def.fallback_after, 3);
});

test('a bad thinking or fallback value is a definition error naming the file, line and field', (t) => {
  for (const bad of ['extreme', '500', '2048.5', 'true']) {
    const msg = definitionError(t, `system: hi\nthinking: ${bad}\n`);
    assert.match(msg, /agents\/a\/agent\.yaml:2: thinking: expected off, low, medium, high, or a whole number of budget tokens of at least 1024/, bad);
  }
  assert.match(definitionError(t, 'system: hi\nfallback_after: 0\n'), /agent\.yaml:2: fallback_after: /);
  assert.match(definitionError(t, 'system: hi\nfallback_model: ""\n'), /agent\.yaml:2: fallback_model: /);
});

test('the fallback is chosen from the failed attempts in a row, and only when it is another model', () => {
  const def = AgentDefinition.parse({ model: 'main', fallback_model: 'alt' });
  assert.deepEqual(chooseModel(def, 0), { model: 'main', fallback: null });
  assert.deepEqual(chooseModel(def, 1), { model: 'main', fallback: null });
  assert.deepEqual(chooseModel(def, 2), { model: 'alt', fallback: { from: 'main', failures: 2 } });
  assert.deepEqual(chooseModel(def, 7), { model: 'alt', fallback: { from: 'main', failures: 7 } });
  assert.deepEqual(chooseModel(AgentDefinition.parse({ model: 'main' }), 9), { model: 'main', fallback: null });
  assert.deepEqual(chooseModel(AgentDefinition.parse({ model: 'main', fallback_model: 'main' }), 9), { model: 'main', fallback: null });
  assert.deepEqual(chooseModel(AgentDefinition.parse({ model: 'main', fallback_model: 'alt', fallback_after: 1 }), 1).model, 'alt');
});

const req = (o: Partial<ModelRequest>): ModelRequest => ({ model: 'm', system: '', tools: [], max_tokens: 10_000, messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }], ...o });
const toolLoop = (first: ModelRequest['messages'][number] extends infer M ? M : never): ModelRequest['messages'] => [
  { role: 'user', content: [{ type: 'text', text: 'hi' }] },
  first,
  { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'ok' }] }] },
];

test('the thinking parameter: sent as the API takes it, never with a forced tool, never where the tool loop has no thinking block', () => {
  assert.equal(thinkingParam(req({})), null, 'no budget, no parameter');
  assert.deepEqual(thinkingParam(req({ thinking: { budget_tokens: 2048 } })), { type: 'enabled', budget_tokens: 2048 });
  assert.equal(thinkingParam(req({ thinking: { budget_tokens: 2048 }, tool_choice: { type: 'tool', name: 'grade_outcome' } })), null);
  const thought = toolLoop({ role: 'assistant', content: [{ type: 'thinking', thinking: 't', signature: 's' }, { type: 'tool_use', id: 'toolu_1', name: 'x', input: {} }] });
  assert.deepEqual(thinkingParam(req({ thinking: { budget_tokens: 2048 }, messages: thought })), { type: 'enabled', budget_tokens: 2048 });
  const redacted = toolLoop({ role: 'assistant', content: [{ type: 'redacted_thinking', data: 'r' }, { type: 'tool_use', id: 'toolu_1', name: 'x', input: {} }] });
  assert.deepEqual(thinkingParam(req({ thinking: { budget_tokens: 2048 }, messages: redacted })), { type: 'enabled', budget_tokens: 2048 });
  const bare = toolLoop({ role: 'assistant', content: [{ type: 'text', text: 'let me look' }, { type: 'tool_use', id: 'toolu_1', name: 'x', input: {} }] });
  assert.equal(thinkingParam(req({ thinking: { budget_tokens: 2048 }, messages: bare })), null);
  // A new user turn after the loop starts a new assistant turn: thinking is back.
  const after = [...bare, { role: 'assistant' as const, content: [{ type: 'text' as const, text: 'done' }] }, { role: 'user' as const, content: [{ type: 'text' as const, text: 'next' }] }];
  assert.deepEqual(thinkingParam(req({ thinking: { budget_tokens: 2048 }, messages: after })), { type: 'enabled', budget_tokens: 2048 });
});

test('openboa events shows the model of a request, and a fallback with its reason', () => {
  const base = { id: 'sevt_1', created_at: '2026-01-01T00:00:00.000Z' };
  assert.equal(describeEvent({ ...base, type: 'span.model_request_start', model: 'main' } as SessionEvent), 'main');
  assert.equal(
    describeEvent({ ...base, type: 'span.model_request_start', model: 'alt', fallback: { from: 'main', failures: 2 } } as SessionEvent),
    'alt (fallback for main after 2 failed attempts in a row)',
  );
  assert.equal(describeEvent({ ...base, type: 'span.model_request_start' } as SessionEvent), '');
});
