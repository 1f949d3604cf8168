/**
 * The model behind one small interface: a request in Messages API form, a
 * response of content blocks, and failures as ModelError with a Managed
 * Agents error type and whether a later retry may succeed. Implementations:
 * anthropic (the real SDK), openai (any OpenAI-compatible endpoint) and
 * scripted (replays a YAML script). docs/providers.md.
 */
import type { ModelUsage, TextBlock, UserContentBlock } from '../schema/index.js';
import type { SessionErrorObject } from '../schema/index.js';

/** What the model is sent for one tool. */
export interface ToolDefinition {
  name: string;
  description: string;
  input_schema: { type: 'object'; [k: string]: unknown };
}

export type AssistantBlock =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> }
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'redacted_thinking'; data: string };

export type ToolResultBlock = { type: 'tool_result'; tool_use_id: string; content: TextBlock[]; is_error?: boolean };

export type UserBlock = UserContentBlock | ToolResultBlock;

export type Message = { role: 'user'; content: UserBlock[] } | { role: 'assistant'; content: AssistantBlock[] };

export interface ModelRequest {
  model: string;
  system: string;
  messages: Message[];
  tools: ToolDefinition[];
  max_tokens: number;
  /**
   * Extended thinking with this budget (agent.yaml `thinking`); absent: none
   * is asked for. Never set together with `tool_choice`, which the API
   * refuses with thinking on.
   */
  thinking?: { budget_tokens: number };
  /** Forces the reply to call this tool (the rubric grader's grade_outcome); default: the model chooses. */
  tool_choice?: { type: 'tool'; name: string };
  /**
   * Set on a grader's request, for providers that answer without a model
   * (the scripted one answers from its `grades` by iteration). Never sent.
   */
  grading?: { outcome_id: string; iteration: number };
}

export interface ModelResponse {
  content: AssistantBlock[];
  /** The Messages API stop_reason (end_turn, tool_use, max_tokens, refusal, ...). */
  stop_reason: string | null;
  usage: ModelUsage;
  stop_details?: { category: string | null; explanation: string | null } | null;
}

export class ModelError extends Error {
  readonly errorType: SessionErrorObject['type'];
  /** Our finer reason, e.g. missing_api_key, http_400, stream_error. */
  readonly code: string;
  /** Whether trying again later may succeed (429, 529, 5xx, network). */
  readonly retryable: boolean;
  /** The call was aborted by our own signal (interrupt, shutdown, deadline). */
  readonly aborted: boolean;
  readonly status: number | undefined;

  constructor(o: { message: string; errorType: SessionErrorObject['type']; code: string; retryable: boolean; aborted?: boolean; status?: number; cause?: unknown }) {
    super(o.message, { cause: o.cause });
    this.name = 'ModelError';
    this.errorType = o.errorType;
    this.code = o.code;
    this.retryable = o.retryable;
    this.aborted = o.aborted ?? false;
    this.status = o.status;
  }
}

/**
 * A piece of a reply's text as the model produces it: `index` is the
 * block's place in the response's `content` (the one complete() resolves
 * with), `text` what was added to it (`kind` says which field: a text
 * block's `text`, a thinking block's `thinking`).
 */
export interface ReplyDelta {
  kind: 'text' | 'thinking';
  index: number;
  text: string;
}

/**
 * Where complete() reports deltas. Called synchronously while the reply
 * streams, in order; the pieces of one block, joined, are a prefix of its
 * text in the response (best effort: a reply that fails has no response).
 * Must not throw and should be quick (it runs on the stream's reads).
 */
export type DeltaSink = (d: ReplyDelta) => void;

export interface ModelProvider {
  readonly name: string;
  /**
   * Must reject with ModelError (never anything else) on failure.
   * `onDelta`, when given, hears the reply's text as it streams (a provider
   * that does not stream reports each block once, before resolving).
   */
  complete(req: ModelRequest, signal: AbortSignal, onDelta?: DeltaSink): Promise<ModelResponse>;
  /**
   * The input tokens of a request as the provider counts them, where it can
   * (the Messages API's count_tokens). Optional; may reject, and the caller
   * then uses its own estimate.
   */
  /**
   * Secret values the provider uses (its API key), by name: the run adds
   * them to its Redactor, so they are never written to the log, runtime/
   * or a terminal. Never given to the sandbox. Optional.
   */
  readonly secrets?: Readonly<Record<string, string>>;
  countTokens?(req: Pick<ModelRequest, 'model' | 'system' | 'tools' | 'messages'>, signal: AbortSignal): Promise<number>;
}
