/**
 * The model port's contract suite (STYLE 8): one list of scenarios, each run
 * against every provider, each provider answering with the same observable
 * result. The anthropic and openai providers are the real SDKs talking to
 * the scripted servers on 127.0.0.1 (tests/helpers/fake-anthropic.ts,
 * fake-openai.ts), each scenario written in that provider's wire format;
 * the scripted provider answers from a script. A scenario a provider cannot
 * express is skipped with the reason, never left out.
 *
 * The SDKs' own retries are off (maxRetries 0): each scenario is one
 * request, and the suite asserts that only one was sent.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { anthropicProvider } from '../../src/core/model/anthropic.js';
import { openaiProvider } from '../../src/core/model/openai.js';
import { scriptedProvider } from '../../src/core/model/scripted.js';
import { ModelError, type ModelProvider, type ModelRequest, type ModelResponse } from '../../src/core/model/provider.js';
import { Script } from '../../src/core/schema/index.js';
import { MALFORMED_ARGUMENTS } from '../../src/core/tools/tool-arguments.js';
import { startFakeAnthropic, type Step } from '../helpers/fake-anthropic.js';
import { startFakeOpenAI, type OaiStep } from '../helpers/fake-openai.js';

type ProviderName = 'anthropic' | 'openai' | 'scripted';

interface Call {
  id: string;
  name: string;
  /** The input, or its JSON text exactly as the model sent it (malformed included). */
  args: Record<string, unknown> | string;
}

/** What the model does, in no provider's format. */
type Act =
  | { kind: 'reply'; text?: string; calls?: Call[]; maxTokens?: boolean; usage?: { input: number; output: number; cacheRead: number } }
  | { kind: 'status'; status: number; message: string }
  /** The stream stops after `text`: the connection is reset, or the response ends without its last event. */
  | { kind: 'cut'; how: 'reset' | 'end'; text: string }
  | { kind: 'stream error'; text: string; message: string }
  /** Nothing listens at the endpoint. */
  | { kind: 'unreachable' }
  /** The request gets no answer: our signal aborts it once it is in flight, or the provider's timeout ends it. */
  | { kind: 'hang'; until: 'abort' | 'timeout' };

interface ErrorWant {
  errorType: ModelError['errorType'];
  code: string;
  retryable: boolean;
  aborted?: boolean;
  status?: number;
  message?: RegExp;
}

type Want = { reply: Pick<ModelResponse, 'content' | 'stop_reason'> & { usage?: ModelResponse['usage'] } } | { error: ErrorWant };

interface Scenario {
  name: string;
  act: Act;
  want: Want | ((p: ProviderName) => Want);
}

/** A provider set up for one scenario: the provider, how to know the request is in flight, and what its server saw. */
interface Rig {
  provider: ModelProvider;
  inFlight(): Promise<void>;
  /** Requests the endpoint received (null where there is no endpoint). */
  requests(): number | null;
}

interface Harness {
  name: ProviderName;
  /** Tool-use ids: as the model sent them, or the provider's own (the scripted one numbers them). */
  ids: 'as sent' | 'its own';
  /** Abort only before the call: a provider that answers at once has no request in flight. */
  abortsBefore?: boolean;
  /** Sets up the scenario, or says why this provider cannot express it. */
  rig(t: TestContext, act: Act): Promise<Rig | string>;
}

const TIMEOUT_MS = 150;

/** A port nothing listens on: one that was just listened on and closed again. */
async function closedPort(): Promise<number> {
  const s = http.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

const ANTHROPIC_ERROR_TYPES: Record<number, string> = { 400: 'invalid_request_error', 401: 'authentication_error', 402: 'billing_error', 429: 'rate_limit_error', 500: 'api_error', 503: 'api_error', 529: 'overloaded_error' };

function anthropicStep(act: Act): Step | null {
  switch (act.kind) {
    case 'reply':
      return {
        ...(act.text !== undefined ? { text: act.text } : {}),
        ...(act.calls ? { toolUses: act.calls.map((c) => ({ id: c.id, name: c.name, input: c.args })) } : {}),
        ...(act.maxTokens ? { stopReason: 'max_tokens' } : {}),
        ...(act.usage ? { usage: { input_tokens: act.usage.input, output_tokens: act.usage.output, cache_creation_input_tokens: 0, cache_read_input_tokens: act.usage.cacheRead } } : {}),
      };
    case 'status':
      return { status: act.status, errorType: ANTHROPIC_ERROR_TYPES[act.status] ?? 'api_error', message: act.message };
    case 'cut':
      return { text: act.text, cut: act.how };
    case 'stream error':
      return { text: act.text, midStreamError: { type: 'overloaded_error', message: act.message } };
    case 'hang':
      return { hang: true };
    case 'unreachable':
      return null;
  }
}

function openaiStep(act: Act): OaiStep | null {
  switch (act.kind) {
    case 'reply':
      return {
        ...(act.text !== undefined ? { text: act.text } : {}),
        ...(act.calls ? { toolCalls: act.calls.map((c) => ({ id: c.id, name: c.name, arguments: c.args })) } : {}),
        ...(act.maxTokens ? { finishReason: 'length' } : {}),
        // prompt_tokens counts the cached ones too.
        ...(act.usage ? { usage: { prompt_tokens: act.usage.input + act.usage.cacheRead, completion_tokens: act.usage.output, cached_tokens: act.usage.cacheRead } } : {}),
      };
    case 'status':
      return { status: act.status, message: act.message, type: act.status < 500 ? 'invalid_request_error' : 'server_error', ...(act.status === 429 ? { type: 'requests', code: 'rate_limit_exceeded' } : {}) };
    case 'cut':
      return { text: act.text, cut: act.how };
    case 'stream error':
      return { text: act.text, midStreamError: { message: act.message, type: 'server_error' } };
    case 'hang':
      return { hang: true };
    case 'unreachable':
      return null;
  }
}

const SDK_OPTIONS = (act: Act) => ({ maxRetries: 0, ...(act.kind === 'hang' && act.until === 'timeout' ? { timeoutMs: TIMEOUT_MS } : {}) });

const harnesses: Harness[] = [
  {
    name: 'anthropic',
    ids: 'as sent',
    async rig(t, act) {
      const step = anthropicStep(act);
      if (!step) {
        const url = `http://127.0.0.1:${await closedPort()}`;
        return { provider: anthropicProvider({ env: { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: url }, ...SDK_OPTIONS(act) }), inFlight: async () => {}, requests: () => null };
      }
      const fake = await startFakeAnthropic([step]);
      t.after(() => fake.close());
      return { provider: anthropicProvider({ env: { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: fake.url }, ...SDK_OPTIONS(act) }), inFlight: () => fake.waitForRequests(1), requests: () => fake.requests.length };
    },
  },
  {
    name: 'openai',
    ids: 'as sent',
    async rig(t, act) {
      const step = openaiStep(act);
      if (!step) {
        const url = `http://127.0.0.1:${await closedPort()}/v1`;
        return { provider: openaiProvider({ env: {}, baseURL: url, ...SDK_OPTIONS(act) }), inFlight: async () => {}, requests: () => null };
      }
      const fake = await startFakeOpenAI([step]);
      t.after(() => fake.close());
      return { provider: openaiProvider({ env: { CONTRACT_KEY: 'k' }, baseURL: fake.url, apiKeyEnv: 'CONTRACT_KEY', ...SDK_OPTIONS(act) }), inFlight: () => fake.waitForRequests(1), requests: () => fake.requests.length };
    },
  },
  {
    name: 'scripted',
    ids: 'its own',
    abortsBefore: true,
    async rig(_t, act) {
      if (act.kind === 'hang' && act.until === 'abort') return { provider: scriptedProvider(Script.parse({ turns: [{ text: 'never read' }] })), inFlight: async () => {}, requests: () => null };
      if (act.kind !== 'reply') return 'a script cannot fail: the scripted provider has no transport, so no status, stream, network or timeout failure';
      if (act.maxTokens) return 'a script turn has no stop reason: the scripted provider ends every turn with end_turn or tool_use';
      if (act.usage) return 'a script spends no tokens: its usage is always 0';
      if (act.calls?.some((c) => typeof c.args === 'string')) return 'script.yaml tool_calls inputs are maps, checked when the script loads: a script cannot hold malformed arguments';
      const script = Script.parse({ turns: [{ ...(act.text !== undefined ? { text: act.text } : {}), tool_calls: (act.calls ?? []).map((c) => ({ name: c.name, input: c.args })) }] });
      return { provider: scriptedProvider(script), inFlight: async () => {}, requests: () => null };
    },
  },
];

const REQUEST: ModelRequest = {
  model: 'contract-model',
  system: 'You are a contract test.',
  messages: [{ role: 'user', content: [{ type: 'text', text: 'go' }] }],
  tools: [{ name: 'bash', description: 'Run a command', input_schema: { type: 'object', properties: { command: { type: 'string' } } } }],
  max_tokens: 256,
};

const text = (t: string) => ({ type: 'text' as const, text: t });
const toolUse = (id: string, name: string, input: Record<string, unknown>) => ({ type: 'tool_use' as const, id, name, input });
const BAD_JSON = '{"command": "ls"}}';
const CUT_JSON = '{"command": "echo hel';

const scenarios: Scenario[] = [
  { name: 'a text reply', act: { kind: 'reply', text: 'Hello from the contract.' }, want: { reply: { content: [text('Hello from the contract.')], stop_reason: 'end_turn' } } },
  {
    name: 'a tool use: its id, name and input',
    act: { kind: 'reply', text: 'Listing.', calls: [{ id: 'toolu_c1', name: 'bash', args: { command: 'ls -la', nested: { deep: [1, 'two'] } } }] },
    want: { reply: { content: [text('Listing.'), toolUse('toolu_c1', 'bash', { command: 'ls -la', nested: { deep: [1, 'two'] } })], stop_reason: 'tool_use' } },
  },
  {
    name: 'two tool uses in one reply, in order',
    act: { kind: 'reply', calls: [{ id: 'toolu_c1', name: 'bash', args: { command: 'true' } }, { id: 'toolu_c2', name: 'bash', args: {} }] },
    want: { reply: { content: [toolUse('toolu_c1', 'bash', { command: 'true' }), toolUse('toolu_c2', 'bash', {})], stop_reason: 'tool_use' } },
  },
  {
    name: 'a tool use whose arguments are malformed JSON: an input the loop refuses, not a failure',
    act: { kind: 'reply', calls: [{ id: 'toolu_bad', name: 'bash', args: BAD_JSON }] },
    want: { reply: { content: [toolUse('toolu_bad', 'bash', { [MALFORMED_ARGUMENTS]: BAD_JSON })], stop_reason: 'tool_use' } },
  },
  { name: 'max_tokens: the partial text and stop_reason max_tokens', act: { kind: 'reply', text: 'a very long ans', maxTokens: true }, want: { reply: { content: [text('a very long ans')], stop_reason: 'max_tokens' } } },
  {
    name: 'max_tokens inside a tool call: its cut arguments are malformed, not guessed',
    act: { kind: 'reply', calls: [{ id: 'toolu_cut', name: 'bash', args: CUT_JSON }], maxTokens: true },
    want: { reply: { content: [toolUse('toolu_cut', 'bash', { [MALFORMED_ARGUMENTS]: CUT_JSON })], stop_reason: 'max_tokens' } },
  },
  {
    name: 'usage in four numbers',
    act: { kind: 'reply', text: 'counted', usage: { input: 12, output: 7, cacheRead: 3 } },
    want: { reply: { content: [text('counted')], stop_reason: 'end_turn', usage: { input_tokens: 12, output_tokens: 7, cache_creation_input_tokens: 0, cache_read_input_tokens: 3 } } },
  },
  {
    name: 'the stream cut mid-reply (connection reset): retryable, no half reply',
    act: { kind: 'cut', how: 'reset', text: 'partial answer' },
    want: { error: { errorType: 'model_request_failed_error', code: 'stream_cut', retryable: true, message: /^the model stream was cut off before the reply was complete/ } },
  },
  {
    name: 'the stream cut mid-reply (the response ends early): retryable, no half reply',
    act: { kind: 'cut', how: 'end', text: 'partial answer' },
    want: { error: { errorType: 'model_request_failed_error', code: 'stream_cut', retryable: true, message: /^the model stream was cut off before the reply was complete/ } },
  },
  {
    name: 'an overloaded error inside the stream: retryable, no half reply',
    act: { kind: 'stream error', text: 'partial answer', message: 'Overloaded' },
    want: { error: { errorType: 'model_overloaded_error', code: 'stream_error', retryable: true, message: /^the model stream failed: Overloaded$/ } },
  },
  {
    name: '429: rate limited, retryable',
    act: { kind: 'status', status: 429, message: 'slow down' },
    want: { error: { errorType: 'model_rate_limited_error', code: 'http_429', retryable: true, status: 429, message: /^rate limited \(429\): slow down$/ } },
  },
  {
    name: '529: overloaded, retryable',
    act: { kind: 'status', status: 529, message: 'Overloaded' },
    want: { error: { errorType: 'model_overloaded_error', code: 'http_529', retryable: true, status: 529, message: /^overloaded \(529\): Overloaded$/ } },
  },
  {
    name: '503: retryable; overloaded from an OpenAI-compatible server, a failed request from the Messages API',
    act: { kind: 'status', status: 503, message: 'unavailable' },
    want: (p) =>
      p === 'openai'
        ? { error: { errorType: 'model_overloaded_error', code: 'http_503', retryable: true, status: 503, message: /^overloaded \(503\): unavailable$/ } }
        : { error: { errorType: 'model_request_failed_error', code: 'http_503', retryable: true, status: 503, message: /^the model API failed \(503\): unavailable$/ } },
  },
  {
    name: '500: a failed request, retryable',
    act: { kind: 'status', status: 500, message: 'upstream exploded' },
    want: { error: { errorType: 'model_request_failed_error', code: 'http_500', retryable: true, status: 500, message: /^the model API failed \(500\): upstream exploded$/ } },
  },
  {
    name: '400: refused, terminal, with the API\'s message',
    act: { kind: 'status', status: 400, message: 'messages: bad' },
    want: { error: { errorType: 'model_request_failed_error', code: 'http_400', retryable: false, status: 400, message: /^the model API refused the request \(400\): messages: bad$/ } },
  },
  {
    name: '401: terminal, naming where the key comes from',
    act: { kind: 'status', status: 401, message: 'invalid x-api-key' },
    want: (p) => ({
      error: { errorType: 'model_request_failed_error', code: 'http_401', retryable: false, status: 401, message: new RegExp(`^authentication failed \\(401\\) at http://127\\.0\\.0\\.1:\\d+(/v1)?: invalid x-api-key; check ${p === 'openai' ? 'agent\\.yaml api_key or OPENAI_API_KEY' : 'ANTHROPIC_API_KEY'}$`) },
    }),
  },
  {
    name: '402: billing, terminal',
    act: { kind: 'status', status: 402, message: 'add credits' },
    want: { error: { errorType: 'billing_error', code: 'http_402', retryable: false, status: 402, message: /^billing \(402\): add credits$/ } },
  },
  {
    name: 'nothing listens at the endpoint: a connection error naming it, retryable',
    act: { kind: 'unreachable' },
    want: { error: { errorType: 'model_request_failed_error', code: 'connection_error', retryable: true, message: /^could not reach the model API at http:\/\/127\.0\.0\.1:\d+(\/v1)?: ECONNREFUSED 127\.0\.0\.1:\d+$/ } },
  },
  {
    name: 'no answer within the timeout: retryable',
    act: { kind: 'hang', until: 'timeout' },
    want: { error: { errorType: 'model_request_failed_error', code: 'timeout', retryable: true, message: /^the model call timed out: / } },
  },
  {
    name: 'our signal aborts the call: aborted, not retryable',
    act: { kind: 'hang', until: 'abort' },
    want: { error: { errorType: 'unknown_error', code: 'aborted', retryable: false, aborted: true, message: /^the model call was aborted$/ } },
  },
];

/** The result as plain data; a provider's own tool-use ids are checked for their form, then left out of the comparison. */
function observed(h: Harness, r: { ok: ModelResponse } | { error: unknown }, want: Want): unknown {
  if ('error' in r) {
    assert.ok(r.error instanceof ModelError, `rejects with a ModelError, not ${String(r.error)}`);
    const e = r.error;
    const w = 'error' in want ? want.error : undefined;
    return { error: { errorType: e.errorType, code: e.code, retryable: e.retryable, ...(w?.aborted !== undefined ? { aborted: e.aborted } : {}), ...(w?.status !== undefined ? { status: e.status } : {}), ...(w?.message ? { message: w.message.test(e.message) ? w.message : e.message } : {}) } };
  }
  const content = r.ok.content.map((b, i) => {
    if (b.type !== 'tool_use' || h.ids === 'as sent') return b;
    assert.match(b.id, /^[a-zA-Z0-9_-]{1,64}$/, 'an id the Messages API takes');
    const w = 'reply' in want ? want.reply.content[i] : undefined;
    return { ...b, id: w?.type === 'tool_use' ? w.id : b.id };
  });
  const ids = r.ok.content.flatMap((b) => (b.type === 'tool_use' ? [b.id] : []));
  assert.equal(new Set(ids).size, ids.length, 'tool-use ids are unique');
  return { reply: { content, stop_reason: r.ok.stop_reason, ...('reply' in want && want.reply.usage ? { usage: r.ok.usage } : {}) } };
}

for (const s of scenarios) {
  for (const h of harnesses) {
    test(`${s.name} [${h.name}]`, async (t) => {
      const rig = await h.rig(t, s.act);
      if (typeof rig === 'string') {
        t.skip(rig);
        return;
      }
      const ac = new AbortController();
      const aborting = s.act.kind === 'hang' && s.act.until === 'abort';
      if (aborting && h.abortsBefore) ac.abort();
      const call = rig.provider.complete(structuredClone(REQUEST), ac.signal).then(
        (ok) => ({ ok }),
        (error: unknown) => ({ error }),
      );
      if (aborting && !h.abortsBefore) {
        await rig.inFlight();
        ac.abort();
      }
      const want = typeof s.want === 'function' ? s.want(h.name) : s.want;
      assert.deepEqual(observed(h, await call, want), want);
      const sent = rig.requests();
      if (sent !== null) assert.equal(sent, 1, 'one request: no retries inside the provider');
    });
  }
}
