/**
 * provider: openai end to end: the real `openai` SDK against the scripted
 * Chat Completions server (tests/helpers/fake-openai.ts), the real store and,
 * for the shell, the real sandbox. The same scenarios as the anthropic
 * provider's, plus what is particular to Chat Completions (tool calls as
 * JSON text, finish_reason, reasoning_effort, a key from a secret).
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { bench, NO_SHELL, type Bench } from '../helpers/run.js';
import { startFakeOpenAI, type FakeOpenAI, type OaiStep } from '../helpers/fake-openai.js';
import { validateLog } from '../helpers/event-schema.js';
import { cliInProcess } from '../helpers/cli.js';
import { confirmToolUse, defineOutcome, interruptSession, sendMessage } from '../../src/core/ops/session-ops.js';
import type { SessionEvent } from '../../src/core/schema/index.js';
import { MALFORMED_ARGUMENTS } from '../../src/core/tools/tool-arguments.js';

const KEY = 'sk-oai-test-0123456789-secret';

interface OaiBench extends Bench {
  oai: FakeOpenAI;
}

/** A bench whose agent `oai` talks to the fake Chat Completions server with the key from the secret OAI_TEST_KEY. */
async function oaiBench(t: TestContext, steps: OaiStep[], agent: Record<string, unknown> = {}): Promise<OaiBench> {
  const b = await bench(t, { env: { OAI_TEST_KEY: KEY, OPENAI_API_KEY: '', OPENAI_BASE_URL: '' } });
  const oai = await startFakeOpenAI(steps);
  t.after(() => oai.close());
  writeOaiAgent(b, 'oai', oai.url, agent);
  return Object.assign(b, { oai });
}

function writeOaiAgent(b: Bench, id: string, url: string, extra: Record<string, unknown> = {}) {
  b.h.write(`agents/${id}/agent.yaml`, YAML.stringify({ provider: 'openai', model: 'local-model', base_url: url, api_key: { secret: { env: 'OAI_TEST_KEY' } }, system: 'You are a test agent.', ...extra }));
}

const errorsOf = (ev: SessionEvent[]) => ev.filter((e): e is Extract<SessionEvent, { type: 'session.error' }> => e.type === 'session.error');
const resultsOf = (ev: SessionEvent[]) => ev.filter((e): e is Extract<SessionEvent, { type: 'agent.tool_result' }> => e.type === 'agent.tool_result');
const textOfResult = (e: Extract<SessionEvent, { type: 'agent.tool_result' }>) => e.content.map((c) => ('text' in c ? c.text : '')).join('');
/** The conversation of a request without the run's closing note (`[openboa] now …`). */
const withoutNotes = (messages: FakeOpenAI['requests'][number]['body']['messages']) =>
  messages.map((m) => (m.role === 'user' && typeof m.content === 'string' ? { ...m, content: m.content.split('\n\n').filter((p) => !p.startsWith('[openboa] now ')).join('\n\n') } : m)).filter((m) => m.role !== 'user' || m.content !== '');

test('a message: one streamed reply becomes agent.message and a span with usage; the request is Chat Completions with tools', async (t) => {
  const b = await oaiBench(t, [{ text: 'Hello from a local model.', usage: { prompt_tokens: 120, completion_tokens: 7, cached_tokens: 100 } }]);
  const id = b.session('hi', 'oai');
  const r = await b.wake(id);
  assert.deepEqual(r.stop_reason, { type: 'end_turn' });
  const ev = b.events(id);
  const msg = ev.find((e) => e.type === 'agent.message');
  assert.deepEqual(msg?.type === 'agent.message' && msg.content, [{ type: 'text', text: 'Hello from a local model.' }]);
  const end = ev.find((e) => e.type === 'span.model_request_end');
  assert.deepEqual(end?.type === 'span.model_request_end' && end.model_usage, { input_tokens: 20, output_tokens: 7, cache_creation_input_tokens: 0, cache_read_input_tokens: 100 });
  assert.equal(end?.type === 'span.model_request_end' && end.cost_usd, 0, 'an unknown local model costs 0');
  const req = b.oai.requests[0]!;
  assert.equal(req.url, '/v1/chat/completions');
  assert.equal(req.headers.authorization, `Bearer ${KEY}`);
  assert.equal(req.body.model, 'local-model');
  assert.equal(req.body.stream, true);
  assert.deepEqual(req.body.stream_options, { include_usage: true });
  assert.equal(req.body.max_tokens, 8192, 'a compatible server gets max_tokens');
  assert.equal(req.body.reasoning_effort, undefined, 'thinking off: no reasoning_effort');
  assert.equal(req.body.messages[0]!.role, 'system');
  assert.match(String(req.body.messages[0]!.content), /You are a test agent\./);
  assert.deepEqual(withoutNotes(req.body.messages).slice(1), [{ role: 'user', content: 'hi' }]);
  const bash = req.body.tools!.find((x) => x.function.name === 'bash');
  assert.equal(bash?.type, 'function');
  assert.equal(bash?.function.parameters.type, 'object');
  assert.ok('command' in (bash?.function.parameters.properties as Record<string, unknown>));
  assert.deepEqual(validateLog(b.store.paths(id).events).errors, []);
});

test('a bash round trip in the real sandbox: tool_calls out, a role: tool message back, then the answer; the shell never has the key', { skip: NO_SHELL }, async (t) => {
  const b = await oaiBench(t, [{ toolCalls: [{ id: 'call_1', name: 'bash', arguments: { command: 'env > env.txt; echo round-trip > f.txt && cat f.txt' } }] }, { text: 'done' }]);
  const id = b.session('run it', 'oai');
  const r = await b.wake(id);
  assert.deepEqual(r.stop_reason, { type: 'end_turn' });
  const [res] = resultsOf(b.events(id));
  assert.equal(res!.is_error, false);
  assert.match(textOfResult(res!), /round-trip/);
  const second = withoutNotes(b.oai.requests[1]!.body.messages).slice(1);
  assert.deepEqual(second[1], { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'bash', arguments: JSON.stringify({ command: 'env > env.txt; echo round-trip > f.txt && cat f.txt' }) } }] });
  const shellEnv = fs.readFileSync(path.join(b.store.paths(id).workspace, 'env.txt'), 'utf8');
  assert.match(shellEnv, /OPENBOA_SESSION_ID=/, 'the shell\'s environment was written');
  assert.ok(!shellEnv.includes(KEY) && !shellEnv.includes('OAI_TEST_KEY'), 'the model key is not in the shell\'s environment');
  assert.equal(second[2]!.role, 'tool');
  assert.equal(second[2]!.tool_call_id, 'call_1');
  assert.match(String(second[2]!.content), /round-trip/);
  assert.deepEqual(validateLog(b.store.paths(id).events).errors, []);
});

test('two tool calls in one turn: one assistant message with both calls, then one tool message each, in order', async (t) => {
  const b = await oaiBench(t, [
    { text: 'Checking twice.', toolCalls: [{ id: 'call_a', name: 'list_wakes', arguments: {} }, { id: 'call_b', name: 'list_wakes', arguments: '' }] },
    { text: 'nothing scheduled' },
  ]);
  const id = b.session('any wakes?', 'oai');
  const r = await b.wake(id);
  assert.deepEqual(r.stop_reason, { type: 'end_turn' });
  const uses = b.events(id).filter((e) => e.type === 'agent.tool_use');
  assert.deepEqual(uses.map((u) => u.type === 'agent.tool_use' && [u.model_tool_use_id, u.input]), [['call_a', {}], ['call_b', {}]], 'empty arguments text is a call without arguments');
  assert.deepEqual(resultsOf(b.events(id)).map((e) => e.is_error), [false, false]);
  const m = withoutNotes(b.oai.requests[1]!.body.messages).slice(1);
  assert.equal(m[1]!.role, 'assistant');
  assert.equal(m[1]!.content, 'Checking twice.');
  assert.deepEqual(m[1]!.tool_calls!.map((c) => c.id), ['call_a', 'call_b']);
  assert.deepEqual(m.slice(2, 4).map((x) => [x.role, x.tool_call_id]), [['tool', 'call_a'], ['tool', 'call_b']]);
  assert.deepEqual(validateLog(b.store.paths(id).events).errors, []);
});

test('a 429 that outlives the SDK\'s retries is logged as model_rate_limited_error and backed off; then the conversation goes on', async (t) => {
  const limited: OaiStep = { status: 429, type: 'requests', code: 'rate_limit_exceeded', message: 'Rate limit reached' };
  const b = await oaiBench(t, [limited, limited, limited, { text: 'finally' }]);
  const id = b.session('please answer', 'oai');
  const r1 = await b.wake(id);
  assert.equal(b.oai.requests.length, 3, 'the SDK tried three times');
  assert.equal(r1.status, 'rescheduling');
  const [err] = errorsOf(b.events(id));
  assert.equal(err!.error.type, 'model_rate_limited_error');
  assert.equal(err!.error.code, 'http_429');
  assert.equal(err!.error.retry_status.type, 'retrying');
  assert.equal(Date.parse(r1.retry_at!) - b.deps.clock.now(), 2000);
  await b.deps.clock.advance(2000);
  const r2 = await b.wake(id);
  assert.deepEqual(r2.stop_reason, { type: 'end_turn' });
  assert.deepEqual(withoutNotes(b.oai.requests[3]!.body.messages).slice(1), [{ role: 'user', content: 'please answer' }], 'the message entered once');
});

test('an exhausted quota (429 insufficient_quota) is a billing_error, not retried by the run', async (t) => {
  const quota: OaiStep = { status: 429, type: 'insufficient_quota', code: 'insufficient_quota', message: 'You exceeded your current quota' };
  const b = await oaiBench(t, [quota, quota, quota]);
  const id = b.session('hi', 'oai');
  const r = await b.wake(id);
  assert.deepEqual(r.stop_reason, { type: 'retries_exhausted' });
  const [err] = errorsOf(b.events(id));
  assert.equal(err!.error.type, 'billing_error');
  assert.equal(err!.error.retry_status.type, 'terminal');
});

test('a 500 that exhausts the SDK\'s retries is a session.error (model_request_failed_error) and the session is rescheduled', async (t) => {
  const fail: OaiStep = { status: 500, message: 'upstream exploded' };
  const b = await oaiBench(t, [fail, fail, fail]);
  const id = b.session('hi', 'oai');
  const r = await b.wake(id);
  assert.equal(b.oai.requests.length, 3);
  assert.equal(r.status, 'rescheduling');
  const [err] = errorsOf(b.events(id));
  assert.equal(err!.error.type, 'model_request_failed_error');
  assert.equal(err!.error.code, 'http_500');
  assert.match(err!.error.message, /upstream exploded/);
  const end = b.events(id).find((e) => e.type === 'span.model_request_end');
  assert.equal(end?.type === 'span.model_request_end' && end.is_error, true);
  assert.deepEqual(validateLog(b.store.paths(id).events).errors, []);
});

test('an error inside the stream is not retried by the SDK: the run is rescheduled and the half reply is not recorded', async (t) => {
  const b = await oaiBench(t, [{ text: 'partial answer', midStreamError: { message: 'The server is overloaded', type: 'server_error' } }]);
  const id = b.session('hi', 'oai');
  const r = await b.wake(id);
  assert.equal(b.oai.requests.length, 1);
  assert.equal(r.status, 'rescheduling');
  const [err] = errorsOf(b.events(id));
  assert.equal(err!.error.code, 'stream_error');
  assert.equal(err!.error.type, 'model_overloaded_error');
  assert.ok(!b.events(id).some((e) => e.type === 'agent.message'), 'no half message');
});

test('finish_reason content_filter ends the run as a refusal; length as a reply cut at max_output_tokens', async (t) => {
  const b = await oaiBench(t, [{ text: '', finishReason: 'content_filter' }, { text: 'a very long ans', finishReason: 'length' }]);
  const id = b.session('something', 'oai');
  assert.deepEqual((await b.wake(id)).stop_reason, { type: 'refusal' });
  sendMessage(b.store, id, 'something else');
  assert.deepEqual((await b.wake(id)).stop_reason, { type: 'retries_exhausted' });
  assert.equal(errorsOf(b.events(id))[0]!.error.code, 'max_output_tokens');
  assert.equal(b.oai.unexpected, 0);
});

test('an interrupt during a slow stream cancels the request within a second; the half reply is not recorded', async (t) => {
  const b = await oaiBench(t, [{ text: 'a long and slow answer that never finishes in time', delayMs: 3000 }]);
  const id = b.session('talk slowly', 'oai');
  const ac = new AbortController();
  const running = b.wake(id, { signal: ac.signal });
  await b.oai.streaming(0);
  interruptSession(b.store, id, 'stop');
  const t0 = performance.now();
  ac.abort({ kind: 'interrupt' });
  const r = await running;
  const took = performance.now() - t0;
  assert.ok(took < 1000, `the run ended ${Math.round(took)} ms after the interrupt`);
  await b.oai.closed(0);
  assert.equal(b.oai.requests[0]!.aborted, true, 'the HTTP request was cancelled');
  assert.equal(r.status, 'idle');
  assert.ok(!b.events(id).some((e) => e.type === 'agent.message'), 'no half message');
  assert.deepEqual(validateLog(b.store.paths(id).events).errors, []);
});

test('malformed tool-call JSON: the call is refused with an error result naming the bad JSON; the model corrects it and the run goes on', async (t) => {
  const broken = '{"command": "echo hi"';
  const b = await oaiBench(t, [{ toolCalls: [{ id: 'call_bad', name: 'list_wakes', arguments: broken }] }, { toolCalls: [{ id: 'call_good', name: 'list_wakes', arguments: {} }] }, { text: 'fixed it' }], { tools: { list_wakes: { permission: 'always_ask' } } });
  const id = b.session('go', 'oai');
  const r1 = await b.wake(id);
  // The malformed call is not asked about; the corrected one is (always_ask).
  const ev = b.events(id);
  const good = ev.find((e) => e.type === 'agent.tool_use' && e.model_tool_use_id === 'call_good');
  assert.deepEqual(r1.stop_reason, { type: 'requires_action', event_ids: [good!.id] });
  const bad = ev.find((e) => e.type === 'agent.tool_use' && e.model_tool_use_id === 'call_bad');
  assert.deepEqual(bad?.type === 'agent.tool_use' && [bad.input, bad.evaluated_permission], [{ [MALFORMED_ARGUMENTS]: broken }, 'deny']);
  const [res] = resultsOf(ev);
  assert.equal(res!.is_error, true);
  assert.match(textOfResult(res!), /^not run: the arguments of this list_wakes call are not valid JSON \(.+\): "\{\\"command\\": \\"echo hi\\""\. Call list_wakes again with its arguments as one JSON object\.$/);
  const second = withoutNotes(b.oai.requests[1]!.body.messages).slice(1);
  assert.equal(second[1]!.tool_calls![0]!.function.arguments, broken, 'the model is shown what it sent');
  assert.match(String(second[2]!.content), /^\[tool error\] not run: the arguments of this list_wakes call are not valid JSON/);
  confirmToolUse(b.store, id, good!.id, { allow: true });
  assert.deepEqual((await b.wake(id)).stop_reason, { type: 'end_turn' });
  assert.deepEqual(resultsOf(b.events(id)).map((e) => e.is_error), [true, false]);
  assert.deepEqual(validateLog(b.store.paths(id).events).errors, []);
});

test('a malformed call of a custom tool is refused too: the client is never handed input it cannot read', async (t) => {
  const custom = { name: 'lookup_order', description: 'Look up an order', input_schema: { type: 'object', properties: { id: { type: 'string' } } } };
  const b = await oaiBench(t, [{ toolCalls: [{ id: 'call_c', name: 'lookup_order', arguments: '{id: 7}' }] }, { text: 'sorry' }], { custom_tools: [custom] });
  const id = b.session('order 7?', 'oai');
  const r = await b.wake(id);
  assert.deepEqual(r.stop_reason, { type: 'end_turn' }, 'no pause for the client');
  const ev = b.events(id);
  assert.ok(!ev.some((e) => e.type === 'agent.custom_tool_use'));
  const [res] = resultsOf(ev);
  assert.equal(res!.is_error, true);
  assert.match(textOfResult(res!), /arguments of this lookup_order call are not valid JSON/);
  assert.deepEqual(validateLog(b.store.paths(id).events).errors, []);
});

test('a session switches provider between runs (anthropic → openai → anthropic) and keeps its history', async (t) => {
  const b = await bench(t, { steps: [{ toolUses: [{ id: 'toolu_a1', name: 'list_wakes', input: {} }] }, { thinking: { thinking: 'nothing to do', signature: 'sig' }, text: 'first answer' }], env: { OAI_TEST_KEY: KEY } });
  const oai = await startFakeOpenAI([{ toolCalls: [{ id: 'call.x/1', name: 'list_wakes', arguments: {} }] }, { text: 'second answer' }]);
  t.after(() => oai.close());
  const id = b.session('hello');
  assert.deepEqual((await b.wake(id)).stop_reason, { type: 'end_turn' });

  writeOaiAgent(b, 'test', oai.url);
  sendMessage(b.store, id, 'second');
  assert.deepEqual((await b.wake(id)).stop_reason, { type: 'end_turn' });
  const m = withoutNotes(oai.requests[0]!.body.messages).slice(1);
  assert.deepEqual(m, [
    { role: 'user', content: 'hello' },
    { role: 'assistant', content: null, tool_calls: [{ id: 'toolu_a1', type: 'function', function: { name: 'list_wakes', arguments: '{}' } }] },
    { role: 'tool', tool_call_id: 'toolu_a1', content: m[2]!.content },
    { role: 'assistant', content: 'first answer' },
    { role: 'user', content: 'second' },
  ], 'the anthropic turns, thinking dropped');

  b.h.write('agents/test/agent.yaml', YAML.stringify({ provider: 'anthropic', model: 'fake-model', system: 'You are a test agent.' }));
  b.fake.push({ text: 'third answer' });
  sendMessage(b.store, id, 'third');
  assert.deepEqual((await b.wake(id)).stop_reason, { type: 'end_turn' });
  const back = b.fake.requests[b.fake.requests.length - 1]!.body.messages;
  const uses = back.flatMap((x) => (Array.isArray(x.content) ? x.content : [])).filter((c) => c.type === 'tool_use').map((c) => c.id);
  assert.deepEqual(uses, ['toolu_a1', 'call_x_1'], 'the openai call id, made safe for the Messages API');
  const texts = back.flatMap((x) => (Array.isArray(x.content) ? x.content : [])).filter((c) => c.type === 'text').map((c) => c.text);
  assert.deepEqual(texts, ['hello', 'first answer', 'second', 'second answer', 'third']);
  assert.deepEqual(validateLog(b.store.paths(id).events).errors, []);
});

test('the rubric grader on openai: one request forcing grade_outcome as a function tool, without reasoning_effort', async (t) => {
  const b = await oaiBench(t, [{ text: 'a poem about the sea' }, { toolCalls: [{ name: 'grade_outcome', arguments: { result: 'failed', explanation: 'not code' } }] }], { thinking: 'medium' });
  const id = b.session(undefined, 'oai');
  defineOutcome(b.store, id, { description: 'x', rubric: 'compiles without warnings', maxIterations: 5 });
  assert.deepEqual((await b.wake(id)).stop_reason, { type: 'end_turn' });
  assert.equal(b.oai.requests.length, 2);
  assert.equal(b.oai.requests[0]!.body.reasoning_effort, 'medium', 'the agent thinks');
  const grader = b.oai.requests[1]!.body;
  assert.deepEqual(grader.tool_choice, { type: 'function', function: { name: 'grade_outcome' } });
  assert.deepEqual(grader.tools!.map((x) => x.function.name), ['grade_outcome']);
  assert.equal(grader.reasoning_effort, undefined, 'a forced tool goes without reasoning_effort');
  const end = b.events(id).find((e) => e.type === 'span.outcome_evaluation_end');
  assert.equal(end?.type === 'span.outcome_evaluation_end' && end.result, 'failed');
  assert.deepEqual(validateLog(b.store.paths(id).events).errors, []);
});

test('thinking: high is sent as reasoning_effort high, with the budget in the completion tokens', async (t) => {
  const b = await oaiBench(t, [{ text: 'thought about it' }], { thinking: 'high' });
  const id = b.session('think', 'oai');
  await b.wake(id);
  assert.equal(b.oai.requests[0]!.body.reasoning_effort, 'high');
  assert.equal(b.oai.requests[0]!.body.max_tokens, 8192 + 16384);
});

test('the key never reaches the log, runtime/ or the terminal, even when the server echoes it', async (t) => {
  const b = await oaiBench(t, [{ status: 401, type: 'invalid_request_error', code: 'invalid_api_key', message: `Incorrect API key provided: ${KEY}.` }]);
  const id = b.session('hi', 'oai');
  const r = await b.wake(id);
  assert.deepEqual(r.stop_reason, { type: 'retries_exhausted' });
  const [err] = errorsOf(b.events(id));
  assert.equal(err!.error.code, 'http_401');
  assert.match(err!.error.message, /Incorrect API key provided: \[REDACTED:OAI_TEST_KEY\]/);
  assert.match(err!.error.message, /check agent\.yaml api_key or OPENAI_API_KEY/);
  for (const f of b.allFiles()) assert.ok(!f.text.includes(KEY), `${f.file} holds the key`);
  b.oai.push({ status: 401, type: 'invalid_request_error', code: 'invalid_api_key', message: `Incorrect API key provided: ${KEY}.` });
  sendMessage(b.store, id, 'again');
  for (const args of [['wake', id], ['status', id], ['events', id, '--full']]) {
    const out = await cliInProcess(args, { home: b.h.root, env: { OAI_TEST_KEY: KEY } });
    if (args[0] === 'events') assert.match(out.stdout, /REDACTED:OAI_TEST_KEY/, 'the events command printed the error');
    assert.ok(!`${out.stdout}${out.stderr}`.includes(KEY), `openboa ${args[0]} printed the key`);
    if (args[0] === 'wake') assert.match(`${out.stdout}${out.stderr}`, /\[REDACTED:OAI_TEST_KEY\]/, 'the wake printed the (redacted) error');
  }
  assert.equal(b.oai.requests.length, 2, 'the CLI wake reached the server');
  for (const f of b.allFiles()) assert.ok(!f.text.includes(KEY), `${f.file} holds the key`);
});

test('a missing key: a named secret that is not set is a clear error and nothing is sent', async (t) => {
  const b = await oaiBench(t, [], { api_key: { secret: { env: 'NOT_SET_ANYWHERE' } } });
  const id = b.session('hi', 'oai');
  const r = await b.wake(id);
  assert.equal(r.status, 'rescheduling', 'retried later: the key is missing in this process, not in the session');
  assert.equal(b.oai.requests.length, 0);
  const [err] = errorsOf(b.events(id));
  assert.equal(err!.error.code, 'missing_api_key');
  assert.match(err!.error.message, /api_key names the secret NOT_SET_ANYWHERE/);
});

test('a local endpoint needs no key: without one, a placeholder is sent, never the daemon\'s OPENAI_API_KEY', async (t) => {
  const b = await bench(t, { env: { OPENAI_API_KEY: 'sk-for-openai-only', OPENAI_ORG_ID: 'org-mine' } });
  const oai = await startFakeOpenAI([{ text: 'no key needed' }]);
  t.after(() => oai.close());
  b.h.write('agents/local/agent.yaml', YAML.stringify({ provider: 'openai', model: 'llama', base_url: oai.url }));
  const id = b.session('hi', 'local');
  assert.deepEqual((await b.wake(id)).stop_reason, { type: 'end_turn' });
  assert.equal(oai.requests[0]!.headers.authorization, 'Bearer no-key');
  assert.equal(oai.requests[0]!.headers['openai-organization'], undefined, 'OpenAI account headers go to OpenAI only');
});

for (const flood of ['text', 'arguments', 'calls'] as const) {
  test(`a reply that floods (${flood}) is cut off: the stream is aborted and the run ends with reply_too_large, not retried`, async (t) => {
    const b = await oaiBench(t, [{ flood }]);
    const id = b.session('hi', 'oai');
    const rss0 = process.memoryUsage().rss;
    const r = await b.wake(id);
    await b.oai.closed(0);
    assert.equal(b.oai.requests[0]!.aborted, true, 'the HTTP request was cut');
    assert.equal(b.oai.requests.length, 1, 'not retried');
    assert.deepEqual(r.stop_reason, { type: 'retries_exhausted' });
    const [err] = errorsOf(b.events(id));
    assert.equal(err!.error.code, 'reply_too_large');
    assert.equal(err!.error.retry_status.type, 'terminal');
    assert.ok(process.memoryUsage().rss - rss0 < 200 * 1024 * 1024, 'memory stayed bounded');
    assert.ok(!b.events(id).some((e) => e.type === 'agent.message' || e.type === 'agent.tool_use'));
    assert.deepEqual(validateLog(b.store.paths(id).events).errors, []);
  });
}
