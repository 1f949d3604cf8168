/**
 * The openai provider: any OpenAI-compatible Chat Completions endpoint
 * (OpenAI itself, vLLM, llama.cpp's server, Ollama, OpenRouter) through the
 * official `openai` SDK, streaming, with tools (docs/providers.md).
 *
 *  - Retries are divided as for the anthropic provider: the SDK retries a
 *    request itself (429, 408, 409, 5xx, network; `maxRetries`, honouring
 *    retry-after), and what outlives those retries is a ModelError with
 *    `retryable`, which the run turns into a failed attempt and a backoff.
 *  - The run's AbortSignal goes to the SDK, so an interrupt cancels the HTTP
 *    request, mid-stream too.
 *  - The endpoint is agent.yaml `base_url`, else OPENAI_BASE_URL of the
 *    daemon's environment, else OpenAI's. The key is the secret agent.yaml
 *    `api_key` names, else OPENAI_API_KEY where it applies (openaiEndpoint).
 *    An endpoint other than OpenAI's may need no key (a local server):
 *    without one, NO_KEY is sent. The SDK
 *    is given every setting explicitly, so it reads nothing of this
 *    process's own environment.
 *  - The key is one of the run's secrets (`secrets`): the run redacts it
 *    wherever it could surface (a server that echoes it in an error).
 *
 * The SDK is imported lazily, as the anthropic one is.
 */
import { BaseUrl } from '../schema/provider-settings.js';
import { classifyError, readReplyStream, streamCut, type ErrorDialect } from './classify-error.js';
import { ModelError, type DeltaSink, type ModelProvider, type ModelRequest, type ModelResponse } from './provider.js';
import { chatMessages, chatToolChoice, chatTools, reasoningEffort, ReplyAssembler, toolCallIds, type ChunkLike } from './openai-messages.js';

export const OPENAI_API = 'https://api.openai.com/v1';
/** Sent as the bearer token to an endpoint that needs no key (most local servers ignore it). */
export const NO_KEY = 'no-key';

export interface OpenAIOptions {
  /** The daemon's environment: OPENAI_API_KEY, OPENAI_BASE_URL, OPENAI_ORG_ID, OPENAI_PROJECT_ID, and the secret `apiKeyEnv` names. */
  env: NodeJS.ProcessEnv;
  /** agent.yaml `base_url`. */
  baseURL?: string | undefined;
  /** The variable agent.yaml `api_key: {secret: {env: NAME}}` names. */
  apiKeyEnv?: string | undefined;
  maxRetries?: number;
  timeoutMs?: number;
}

type Sdk = typeof import('openai');
let sdkPromise: Promise<Sdk> | null = null;
const loadSdk = () => (sdkPromise ??= import('openai'));

/**
 * Where the requests go and with which key; `problem` when no key can be
 * used. A key is only sent where it was meant to go: the secret agent.yaml
 * `api_key` names goes to the agent's endpoint, but OPENAI_API_KEY, the
 * daemon's default, goes only to the daemon's default endpoint
 * (OPENAI_BASE_URL, else OpenAI's) or to OpenAI's own. An agent.yaml
 * `base_url` elsewhere (a local server, a third party) without `api_key`
 * is sent no key, so a key for OpenAI never leaks to a server an agent
 * names.
 */
export function openaiEndpoint(o: OpenAIOptions): { baseURL: string; official: boolean; key: { name: string; value: string } | null; problem: string | null } {
  const fromEnv = o.baseURL ? undefined : o.env.OPENAI_BASE_URL || undefined;
  // OPENAI_BASE_URL is held to agent.yaml base_url's rules; a bad one is refused without being printed (it may hold a password).
  if (fromEnv !== undefined && !BaseUrl.safeParse(fromEnv).success) {
    return { baseURL: withoutUserinfo(fromEnv), official: false, key: null, problem: "OPENAI_BASE_URL in the environment of the process that runs the session is not an http:// or https:// URL without credentials in it (put the key in OPENAI_API_KEY or agent.yaml api_key)" };
  }
  const baseURL = o.baseURL || fromEnv || OPENAI_API;
  const official = isOpenAIEndpoint(baseURL);
  const name = o.apiKeyEnv ?? 'OPENAI_API_KEY';
  const defaultKeyApplies = o.apiKeyEnv !== undefined || !o.baseURL || official;
  const value = defaultKeyApplies ? o.env[name] : undefined;
  if (value) return { baseURL, official, key: { name, value }, problem: null };
  if (o.apiKeyEnv) return { baseURL, official, key: null, problem: `no API key: agent.yaml api_key names the secret ${o.apiKeyEnv}, which is not set in the environment of the process that runs the session` };
  if (official) return { baseURL, official, key: null, problem: 'no API key: set OPENAI_API_KEY in the environment of the process that runs the session, or name a secret in agent.yaml api_key' };
  return { baseURL, official, key: null, problem: null };
}

/**
 * OpenAI's own endpoint: https, host api.openai.com, the default port.
 * http:// (the key in clear on the wire) or another port (whoever listens
 * there) is not OpenAI's, so OPENAI_API_KEY does not go there unasked.
 */
export function isOpenAIEndpoint(url: string): boolean {
  try {
    const u = new URL(url);
    return u.protocol === 'https:' && u.hostname === 'api.openai.com' && u.port === '' && u.username === '' && u.password === '';
  } catch {
    return false;
  }
}

/** A URL for a message: its user and password taken out; what is not a URL is not shown. */
export function withoutUserinfo(url: string): string {
  try {
    const u = new URL(url);
    u.username = '';
    u.password = '';
    return u.toString();
  } catch {
    return '(not a URL)';
  }
}

export interface OpenAIProvider extends ModelProvider {
  /** The key by the variable it came from, for the run's Redactor; empty when none is used. */
  readonly secrets: Readonly<Record<string, string>>;
}

export function openaiProvider(o: OpenAIOptions): OpenAIProvider {
  const endpoint = openaiEndpoint(o);
  let client: InstanceType<Sdk['default']> | null = null;
  const connect = (sdk: Sdk) =>
    (client ??= new sdk.default({
      apiKey: endpoint.key?.value ?? NO_KEY,
      adminAPIKey: null,
      // OpenAI's account headers go to OpenAI only.
      organization: (endpoint.official && o.env.OPENAI_ORG_ID) || null,
      project: (endpoint.official && o.env.OPENAI_PROJECT_ID) || null,
      webhookSecret: null,
      baseURL: endpoint.baseURL,
      maxRetries: o.maxRetries ?? 2,
      timeout: o.timeoutMs ?? 600_000,
      // The SDK's own logging would print requests (the conversation) to the daemon's stderr.
      logLevel: 'off',
    }));
  return {
    name: 'openai',
    secrets: endpoint.key ? { [endpoint.key.name]: endpoint.key.value } : {},
    async complete(req: ModelRequest, signal: AbortSignal, onDelta?: DeltaSink): Promise<ModelResponse> {
      // Retryable for the reason the anthropic provider gives: the process lacks the key, not the session.
      if (endpoint.problem) throw new ModelError({ message: endpoint.problem, errorType: 'model_request_failed_error', code: 'missing_api_key', retryable: true });
      const sdk = await loadSdk();
      const c = connect(sdk);
      try {
        const effort = reasoningEffort(req);
        const choice = chatToolChoice(req);
        const tools = chatTools(req);
        const stream = await c.chat.completions.create(
          {
            model: req.model,
            messages: chatMessages(req) as never,
            ...(tools.length ? { tools: tools as never } : {}),
            ...(choice ? { tool_choice: choice } : {}),
            ...(effort ? { reasoning_effort: effort } : {}),
            // OpenAI's reasoning models refuse max_tokens; many compatible servers know only max_tokens.
            ...(endpoint.official ? { max_completion_tokens: req.max_tokens } : { max_tokens: req.max_tokens }),
            stream: true,
            stream_options: { include_usage: true },
          },
          { signal },
        );
        const reply = new ReplyAssembler(onDelta);
        // The assembler's own bound (reply_too_large) is thrown from add(): leaving the loop aborts the stream.
        await readReplyStream(stream, (chunk) => reply.add(chunk as ChunkLike), signal, sdk.default);
        // Every Chat Completions stream ends its choice with a finish_reason; without one, the stream was cut.
        if (reply.finishReason === null) throw streamCut('it ended without a finish_reason');
        return reply.reply(toolCallIds(req));
      } catch (e) {
        throw classifyError(e, signal, endpoint.baseURL, dialect(sdk));
      }
    },
  };
}

/**
 * OpenAI-compatible servers say overloaded with 503 (vLLM, gateways) or 529;
 * a 401 points at agent.yaml api_key or the daemon's key.
 */
const dialect = (sdk: Sdk): ErrorDialect => ({ errors: sdk.default, keyHint: 'agent.yaml api_key or OPENAI_API_KEY', overloaded: [503, 529] });
