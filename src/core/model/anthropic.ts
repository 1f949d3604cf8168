/**
 * The anthropic provider: the real @anthropic-ai/sdk, streaming (the raw
 * events of messages.create, assembled by MessageAssembler), with the SDK's
 * own retries (429, 5xx, 529, network) and our AbortSignal wired through so
 * an interrupt cancels the HTTP request. Failures are mapped by
 * classifyError, as the openai provider's are.
 * Extended thinking is sent as the API allows it (thinking.ts).
 * The SDK is imported lazily: it costs ~180 ms to load and the CLI's other
 * commands never need it.
 */
import { classifyError, readReplyStream, streamCut, type ErrorDialect } from './classify-error.js';
import { MessageAssembler } from './message-assembler.js';
import { ModelError, type DeltaSink, type ModelProvider, type ModelRequest, type ModelResponse } from './provider.js';
import { thinkingParam } from './thinking.js';

export interface AnthropicOptions {
  /** The daemon's environment: ANTHROPIC_API_KEY / ANTHROPIC_AUTH_TOKEN / ANTHROPIC_BASE_URL. */
  env: NodeJS.ProcessEnv;
  maxRetries?: number;
  timeoutMs?: number;
}

type Sdk = typeof import('@anthropic-ai/sdk');
let sdkPromise: Promise<Sdk> | null = null;
const loadSdk = () => (sdkPromise ??= import('@anthropic-ai/sdk'));

export function anthropicProvider(o: AnthropicOptions): ModelProvider {
  let client: InstanceType<Sdk['default']> | null = null;
  const connect = (sdk: Sdk) =>
    (client ??= new sdk.default({
      apiKey: o.env.ANTHROPIC_API_KEY ?? null,
      authToken: o.env.ANTHROPIC_AUTH_TOKEN ?? null,
      baseURL: o.env.ANTHROPIC_BASE_URL || undefined,
      maxRetries: o.maxRetries ?? 2,
      timeout: o.timeoutMs ?? 600_000,
    }));
  return {
    name: 'anthropic',
    async countTokens(req, signal) {
      if (!o.env.ANTHROPIC_API_KEY && !o.env.ANTHROPIC_AUTH_TOKEN) throw new Error('no API key');
      const r = await connect(await loadSdk()).messages.countTokens(
        { model: req.model, messages: req.messages as never, ...(req.system ? { system: req.system } : {}), ...(req.tools.length ? { tools: req.tools as never } : {}) },
        { signal, maxRetries: 0 },
      );
      return r.input_tokens;
    },
    async complete(req: ModelRequest, signal: AbortSignal, onDelta?: DeltaSink): Promise<ModelResponse> {
      const apiKey = o.env.ANTHROPIC_API_KEY;
      const authToken = o.env.ANTHROPIC_AUTH_TOKEN;
      if (!apiKey && !authToken) {
        throw new ModelError({
          message: 'no API key: set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN) in the environment of the process that runs the session',
          errorType: 'model_request_failed_error',
          code: 'missing_api_key',
          // The key belongs to the process, not the session: another process (the daemon) may have it, so the
          // session keeps retrying with backoff rather than ending (a manual wake from a bare shell must not
          // end the daemon's retries). No request is sent, so a retry costs nothing.
          retryable: true,
        });
      }
      const sdk = await loadSdk();
      const client = connect(sdk);
      try {
        const cached = withCacheBreakpoints(req);
        const thinking = thinkingParam(req);
        const stream = await client.messages.create(
          {
            model: req.model,
            max_tokens: req.max_tokens,
            ...(cached.system.length ? { system: cached.system as never } : {}),
            messages: cached.messages as never,
            ...(cached.tools.length ? { tools: cached.tools as never } : {}),
            ...(req.tool_choice ? { tool_choice: req.tool_choice } : {}),
            ...(thinking ? { thinking } : {}),
            stream: true,
          },
          { signal },
        );
        const reply = new MessageAssembler(onDelta);
        await readReplyStream(stream, (ev) => reply.add(ev), signal, sdk.default);
        if (!reply.ended) throw streamCut('it ended without message_stop');
        return reply.reply();
      } catch (e) {
        throw classifyError(e, signal, client.baseURL, dialect(sdk));
      }
    },
  };
}

const EPHEMERAL = { type: 'ephemeral' } as const;

/** The Messages API says overloaded with 529; a 401 points at the daemon's key. */
const dialect = (sdk: Sdk): ErrorDialect => ({ errors: sdk.default, keyHint: 'ANTHROPIC_API_KEY', overloaded: [529] });

/**
 * The request with prompt-cache breakpoints where the Messages API takes them
 * (at most 4): the last tool, the system prompt, and the last block of the
 * newest message. Every request of a session repeats the one before as its
 * prefix (the system prompt holds no per-run facts; see system-prompt.ts), so
 * each request reads from the cache what the previous one wrote, and writes
 * only what is new. Copies; never changes `req`.
 */
export function withCacheBreakpoints(req: ModelRequest): { system: Array<Record<string, unknown>>; tools: Array<Record<string, unknown>>; messages: Array<Record<string, unknown>> } {
  const tools = req.tools.map((t, i) => (i === req.tools.length - 1 ? { ...t, cache_control: EPHEMERAL } : { ...t }));
  const system = req.system ? [{ type: 'text', text: req.system, cache_control: EPHEMERAL }] : [];
  const messages = req.messages.map((m, i) => {
    if (i !== req.messages.length - 1 || m.content.length === 0) return m as unknown as Record<string, unknown>;
    const content = m.content.map((b, k) => (k === m.content.length - 1 ? { ...b, cache_control: EPHEMERAL } : b));
    return { ...m, content } as unknown as Record<string, unknown>;
  });
  return { system, tools, messages };
}
