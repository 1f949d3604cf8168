/** The Messages ⇄ Chat Completions mapping (model/openai-messages.ts), the endpoint settings and malformed tool arguments. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chatMessages, chatToolChoice, modelUsage, reasoningEffort, ReplyAssembler, stopReason, toolCallId, TOOL_ERROR_PREFIX } from '../../src/core/model/openai-messages.js';
import { openaiEndpoint } from '../../src/core/model/openai.js';
import { MALFORMED_ARGUMENTS, malformedArguments, malformedInputError, parseToolArguments } from '../../src/core/tools/tool-arguments.js';
import { loadAgent } from '../../src/core/definitions/definitions.js';
import { OpenboaError } from '../../src/core/foundation/errors.js';
import { tempHome } from '../helpers/home.js';

test('a conversation maps to chat messages: system first, tool results as role: tool, thinking dropped, errors marked', () => {
  const m = chatMessages({
    system: 'sys',
    messages: [
      { role: 'user', content: [{ type: 'text', text: 'hi' }] },
      { role: 'assistant', content: [{ type: 'thinking', thinking: 'hmm', signature: 's' }] },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'plan', signature: 's' },
          { type: 'text', text: 'two calls' },
          { type: 'tool_use', id: 'a', name: 'bash', input: { command: 'ls' } },
          { type: 'tool_use', id: 'b', name: 'bash', input: { [MALFORMED_ARGUMENTS]: '{"command":' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'a', content: [{ type: 'text', text: 'out' }] },
          { type: 'tool_result', tool_use_id: 'b', content: [{ type: 'text', text: 'bad' }], is_error: true },
          { type: 'text', text: 'note' },
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } },
        ],
      },
    ],
  });
  assert.deepEqual(m, [
    { role: 'system', content: 'sys' },
    { role: 'user', content: 'hi' },
    {
      role: 'assistant',
      content: 'two calls',
      tool_calls: [
        { id: 'a', type: 'function', function: { name: 'bash', arguments: '{"command":"ls"}' } },
        { id: 'b', type: 'function', function: { name: 'bash', arguments: '{"command":' } },
      ],
    },
    { role: 'tool', tool_call_id: 'a', content: 'out' },
    { role: 'tool', tool_call_id: 'b', content: `${TOOL_ERROR_PREFIX}bad` },
    { role: 'user', content: [{ type: 'text', text: 'note' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }] },
  ]);
});

test('streamed chunks assemble: text in order, tool calls by index with their arguments concatenated', () => {
  const r = new ReplyAssembler();
  r.add({ choices: [{ delta: { content: 'Hel' } }] });
  r.add({ choices: [{ delta: { content: 'lo', tool_calls: [{ index: 1, id: 'call_2', function: { name: 'read', arguments: '{"file_' } }] } }] });
  r.add({ choices: [{ delta: { tool_calls: [{ index: 0, id: 'call/1', function: { name: 'bash', arguments: '{"comm' } }] } }] });
  r.add({ choices: [{ delta: { tool_calls: [{ index: 0, function: { arguments: 'and":"ls"}' } }, { index: 1, function: { arguments: 'path":"a"' } }] } }] });
  r.add({ choices: [{ delta: {}, finish_reason: 'tool_calls' }] });
  r.add({ choices: [], usage: { prompt_tokens: 50, completion_tokens: 9, prompt_tokens_details: { cached_tokens: 40 } } });
  assert.deepEqual(r.reply(), {
    content: [
      { type: 'text', text: 'Hello' },
      { type: 'tool_use', id: 'call_1', name: 'bash', input: { command: 'ls' } },
      { type: 'tool_use', id: 'call_2', name: 'read', input: { [MALFORMED_ARGUMENTS]: '{"file_path":"a"' } },
    ],
    stop_reason: 'tool_use',
    usage: { input_tokens: 10, output_tokens: 9, cache_creation_input_tokens: 0, cache_read_input_tokens: 40 },
    stop_details: null,
  });
});

test('a tool-call id the conversation already has, or the reply repeats, is replaced', () => {
  const r = new ReplyAssembler();
  r.add({ choices: [{ delta: { tool_calls: [{ index: 0, id: 'call_0', function: { name: 'bash', arguments: '{}' } }, { index: 1, id: 'call_1', function: { name: 'bash', arguments: '{}' } }, { index: 2, id: 'call_1', function: { name: 'bash', arguments: '{}' } }] } }] });
  const ids = r.reply(new Set(['call_0'])).content.map((b) => (b.type === 'tool_use' ? b.id : ''));
  assert.equal(ids[1], 'call_1');
  assert.equal(new Set(ids).size, 3);
  assert.ok(!ids.includes('call_0'));
});

test('finish_reason maps to stop_reason; calls make tool_use even under "stop"', () => {
  assert.equal(stopReason('stop', false), 'end_turn');
  assert.equal(stopReason(null, false), 'end_turn');
  assert.equal(stopReason('tool_calls', true), 'tool_use');
  assert.equal(stopReason('stop', true), 'tool_use');
  assert.equal(stopReason('length', true), 'max_tokens');
  assert.equal(stopReason('content_filter', false), 'refusal');
  assert.deepEqual(modelUsage(null), { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 });
});

test('thinking budgets map to the nearest reasoning_effort; none with a forced tool', () => {
  assert.equal(reasoningEffort({}), undefined);
  assert.equal(reasoningEffort({ thinking: { budget_tokens: 1024 } }), 'low');
  assert.equal(reasoningEffort({ thinking: { budget_tokens: 2048 } }), 'low');
  assert.equal(reasoningEffort({ thinking: { budget_tokens: 5119 } }), 'low');
  assert.equal(reasoningEffort({ thinking: { budget_tokens: 5120 } }), 'medium');
  assert.equal(reasoningEffort({ thinking: { budget_tokens: 8192 } }), 'medium');
  assert.equal(reasoningEffort({ thinking: { budget_tokens: 12288 } }), 'high');
  assert.equal(reasoningEffort({ thinking: { budget_tokens: 64000 } }), 'high');
  assert.equal(reasoningEffort({ thinking: { budget_tokens: 16384 }, tool_choice: { type: 'tool', name: 'grade_outcome' } }), undefined);
  assert.deepEqual(chatToolChoice({ tool_choice: { type: 'tool', name: 'grade_outcome' } }), { type: 'function', function: { name: 'grade_outcome' } });
});

test('tool call ids are kept safe for the Messages API', () => {
  assert.equal(toolCallId('call_abc-1'), 'call_abc-1');
  assert.equal(toolCallId('chatcmpl.tool/7'), 'chatcmpl_tool_7');
  assert.match(toolCallId(''), /^call_[0-9a-f]{24}$/);
  assert.equal(toolCallId('x'.repeat(100)).length, 64);
});

test('tool arguments: an object is the input; anything else is kept as text and explained', () => {
  assert.deepEqual(parseToolArguments('{"a":1}'), { a: 1 });
  assert.deepEqual(parseToolArguments('  '), {});
  for (const bad of ['{"a":', '[1]', 'null', '"s"', '{"a":1}{']) {
    const input = parseToolArguments(bad);
    assert.equal(malformedArguments(input), bad);
  }
  assert.equal(malformedArguments({ a: 1 }), null);
  assert.equal(malformedArguments({ [MALFORMED_ARGUMENTS]: 'x', other: 1 }), null, 'only the marker alone');
  assert.match(malformedInputError('bash', '[1]'), /not valid JSON \(expected an object, got an array\): "\[1\]"/);
  assert.ok(malformedInputError('bash', 'x'.repeat(1000)).length < 500, 'a long text is quoted in part');
});

test('the endpoint: base_url, else OPENAI_BASE_URL, else OpenAI; a key is needed only by OpenAI itself', () => {
  assert.deepEqual(openaiEndpoint({ env: { OPENAI_API_KEY: 'k' } }), { baseURL: 'https://api.openai.com/v1', official: true, key: { name: 'OPENAI_API_KEY', value: 'k' }, problem: null });
  assert.match(openaiEndpoint({ env: {} }).problem ?? '', /set OPENAI_API_KEY/);
  const local = openaiEndpoint({ env: { OPENAI_BASE_URL: 'http://127.0.0.1:11434/v1' } });
  assert.deepEqual([local.baseURL, local.official, local.key, local.problem], ['http://127.0.0.1:11434/v1', false, null, null]);
  const named = openaiEndpoint({ env: { OPENAI_BASE_URL: 'http://x/v1', OPENAI_API_KEY: 'ignored', MY_KEY: 's' }, baseURL: 'http://y/v1', apiKeyEnv: 'MY_KEY' });
  assert.deepEqual([named.baseURL, named.key], ['http://y/v1', { name: 'MY_KEY', value: 's' }]);
  assert.match(openaiEndpoint({ env: {}, baseURL: 'http://y/v1', apiKeyEnv: 'MY_KEY' }).problem ?? '', /api_key names the secret MY_KEY/);
  // OPENAI_API_KEY goes with the daemon's own endpoint, or to OpenAI; never to a server only agent.yaml names.
  assert.deepEqual(openaiEndpoint({ env: { OPENAI_API_KEY: 'k', OPENAI_BASE_URL: 'http://proxy/v1' } }).key, { name: 'OPENAI_API_KEY', value: 'k' });
  assert.equal(openaiEndpoint({ env: { OPENAI_API_KEY: 'k' }, baseURL: 'http://127.0.0.1:8000/v1' }).key, null);
  assert.equal(openaiEndpoint({ env: { OPENAI_API_KEY: 'k' }, baseURL: 'http://127.0.0.1:8000/v1' }).problem, null);
  assert.deepEqual(openaiEndpoint({ env: { OPENAI_API_KEY: 'k' }, baseURL: 'https://api.openai.com/v1' }).key, { name: 'OPENAI_API_KEY', value: 'k' });
  assert.deepEqual(openaiEndpoint({ env: { OPENAI_API_KEY: 'k' }, baseURL: 'http://127.0.0.1:8000/v1', apiKeyEnv: 'OPENAI_API_KEY' }).key, { name: 'OPENAI_API_KEY', value: 'k' }, 'named explicitly, it goes anywhere');
});

function rejects(fn: () => unknown, re: RegExp) {
  try {
    fn();
  } catch (e) {
    assert.ok(OpenboaError.is(e), `expected an OpenboaError, got ${String(e)}`);
    assert.match(e.message, re);
    return;
  }
  assert.fail('expected an error');
}

test('agent.yaml: base_url and api_key load for provider openai and are refused, by name, for others', (t) => {
  const h = tempHome(t, { bundled: false });
  h.write('agents/o/agent.yaml', 'provider: openai\nmodel: gpt-4.1\nbase_url: http://127.0.0.1:8000/v1\napi_key: { secret: { env: VLLM_KEY } }\n');
  const a = loadAgent(h.home, 'o').def;
  assert.deepEqual([a.provider, a.base_url, a.api_key], ['openai', 'http://127.0.0.1:8000/v1', { secret: { env: 'VLLM_KEY' } }]);
  h.write('agents/a/agent.yaml', 'provider: anthropic\nbase_url: http://127.0.0.1:8000/v1\n');
  rejects(() => loadAgent(h.home, 'a'), /base_url: base_url is used only by provider openai; this agent's provider is anthropic/);
  h.write('agents/s/agent.yaml', 'provider: anthropic\napi_key: { secret: { env: K } }\n');
  rejects(() => loadAgent(h.home, 's'), /api_key: api_key is used only by provider openai/);
  h.write('agents/k/agent.yaml', 'provider: openai\napi_key: sk-plain-text\n');
  rejects(() => loadAgent(h.home, 'k'), /api_key: /);
  h.write('agents/u/agent.yaml', 'provider: openai\nbase_url: ftp://host/v1\n');
  rejects(() => loadAgent(h.home, 'u'), /base_url: expected an http:\/\/ or https:\/\/ URL/);
  h.write('agents/c/agent.yaml', 'provider: openai\nbase_url: https://user:pw@host/v1\n');
  rejects(() => loadAgent(h.home, 'c'), /without credentials in it/);
});

test('OpenAI\'s endpoint is https on the default port only: http:// or another port of api.openai.com gets no OPENAI_API_KEY', () => {
  for (const u of ['http://api.openai.com/v1', 'https://api.openai.com:8443/v1', 'http://api.openai.com:443/v1']) {
    const e = openaiEndpoint({ env: { OPENAI_API_KEY: 'k' }, baseURL: u });
    assert.equal(e.official, false, u);
    assert.equal(e.key, null, u);
  }
  assert.equal(openaiEndpoint({ env: { OPENAI_API_KEY: 'k' }, baseURL: 'https://api.openai.com:443/v1' }).official, true, 'the default port written out');
});

test('OPENAI_BASE_URL is held to base_url\'s rules: credentials or another scheme are refused, and the URL is never shown with them', () => {
  for (const u of ['https://user:hunter2@proxy.example/v1', 'ftp://proxy/v1', 'not a url']) {
    const e = openaiEndpoint({ env: { OPENAI_API_KEY: 'k', OPENAI_BASE_URL: u } });
    assert.match(e.problem ?? '', /OPENAI_BASE_URL .* not an http:\/\/ or https:\/\/ URL without credentials/, u);
    assert.equal(e.key, null);
    assert.ok(!JSON.stringify(e).includes('hunter2'), 'no password anywhere');
  }
  assert.equal(openaiEndpoint({ env: { OPENAI_BASE_URL: 'https://user:pw@x/v1' }, baseURL: 'http://127.0.0.1:8000/v1' }).problem, null, 'unused when agent.yaml names base_url');
});
