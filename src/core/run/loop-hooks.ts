/**
 * The loop's extension points. The loop (loop.ts) owns the order of one
 * step: steer → bounds → context → model → record the reply → tools →
 * after-turn; everything a capability changes about a run is one of these
 * hooks, written as a module of its own and listed in defaultHooks()
 * (default-hooks.ts). A hook reads the immutable RunContext and writes only
 * through the RunJournal; its per-run state lives in the hook object, which
 * is built fresh for every run.
 */
import type { ModelError, ModelProvider, ModelRequest, ModelResponse } from '../model/provider.js';
import { mcpToolName, type SessionEvent, type SessionSnapshot } from '../schema/index.js';
import type { ConversationView } from './conversation.js';
import type { RunJournal, RetryStatus } from './journal.js';
import type { Ending, RunContext, Runtime } from './run-context.js';
import type { SessionErrorType } from './failed-attempt.js';

export type ToolUseEvent = Extract<SessionEvent, { type: 'agent.tool_use' }>;
/** A call of an MCP server's tool, as logged (`name` is the tool's name on its server). */
export type McpToolUseEvent = Extract<SessionEvent, { type: 'agent.mcp_tool_use' }>;

/**
 * An MCP tool use as the tool policy sees it: a tool use named as the model
 * called it (mcp__<server>__<tool>), so guards keyed on names (read, write)
 * never mistake a server's tool for a built-in.
 */
export function policyView(e: McpToolUseEvent): ToolUseEvent {
  return { id: e.id, type: 'agent.tool_use', created_at: e.created_at, ...(e.wake_id ? { wake_id: e.wake_id } : {}), name: mcpToolName(e.mcp_server_name, e.name), input: e.input, model_tool_use_id: e.model_tool_use_id, evaluated_permission: e.evaluated_permission };
}

/**
 * Steering: what arrives while the run works. Called at the start of every
 * step; takes mid-run input into the run (or aborts it through the control)
 * and returns the session as folded now, which the step reads.
 */
export interface Steering {
  poll(ctx: RunContext, journal: RunJournal): SessionSnapshot;
}

/**
 * The context strategy: what the model sees. rebuild() turns the log into
 * the conversation (null: nothing awaits the model, the turn is over);
 * fit() makes the request's system prompt, tools and messages fit the
 * window, recording what it did (a compaction, runtime/context.json); it
 * may ask the model first (a summary), so it may be async.
 * Between compactions, each request must repeat the previous one as its
 * prefix (the prompt cache).
 */
export interface ContextStrategy {
  rebuild(ctx: RunContext, snap: SessionSnapshot): ConversationView | null;
  fit(ctx: RunContext, journal: RunJournal, conv: ConversationView, snap: SessionSnapshot): Fitted | Promise<Fitted>;
}

/** What the context strategy hands the request: its system prompt, tools and messages. */
export type Fitted = Pick<ModelRequest, 'system' | 'tools' | 'messages'>;

/** How a tool call of a reply is filed when the reply is recorded. */
export type Classification = { kind: 'custom' } | { kind: 'tool'; permission: 'allow' | 'ask' | 'deny'; mcp?: { server: string; tool: string } };

/** What happens to one allowed call just before it would run. */
export type CallDecision =
  /** Run it; `note` is added after its result. */
  | { kind: 'run'; note?: string }
  /** Do not run it; `result` is its error result. The run goes on. */
  | { kind: 'refuse'; result: string }
  /**
   * Do not run it, and end the run: `result` is its error result, `notRun`
   * the result of every later call of the reply, `notAsked` that of its
   * open asks, and `error` is recorded before the run ends.
   */
  | { kind: 'halt'; result: string; notRun: string; notAsked: string; error: { type: SessionErrorType; code: string; message: string; retry: RetryStatus } };

/**
 * The tool policy: permissions, confirmations and guards. classify() files
 * a call as the reply is written (`evaluated_permission`); refusal() is the
 * error result of a denied call; beforeCall() decides each allowed call as
 * it comes up; permitsNow() re-checks a call a person confirmed (its tool's
 * permission may have changed since it was asked).
 */
export interface ToolPolicy {
  /** `input` is the call's input as the model gave it (the escalate policy reads it to resolve a confident escalation by itself). */
  classify(name: string, input?: unknown): Classification;
  /** `input` as in classify(): a refusal may depend on it (a call whose arguments are not JSON). */
  refusal(name: string, input?: unknown): string;
  beforeCall(use: ToolUseEvent): CallDecision;
  permitsNow(name: string): { ok: true } | { ok: false; why: string };
}

/** One model reply as recorded, and what came of its tool calls. */
export interface Turn {
  /** The events the reply became (messages, thinking, tool uses, the span's end). */
  written: readonly SessionEvent[];
  /** Its tool uses (built-in and custom). */
  uses: readonly SessionEvent[];
  /** Tool uses waiting for a person (asks, custom tools). */
  asks: readonly string[];
  /** The reply said nothing and called nothing. */
  empty: boolean;
}

/**
 * After a turn: undefined lets the loop go on as it would (end the turn
 * when the reply called no tools, ask again after an empty reply);
 * `end` ends the run; `continue` asks the model again even though the
 * reply called no tools (a grader that asked for a revision).
 */
export type TurnVerdict = undefined | { end: Ending } | { continue: true };

/**
 * `turn` is null when the run found the agent's turn already over, with
 * nothing for the model (a run recovering after the last reply of one that
 * died): the hooks may still act on that ending (an outcome's grader
 * does). A hook that answers `continue` to a null turn must have written
 * something for the model, or the loop ends the run.
 */
export interface AfterTurnHook {
  /**
   * `snap`: the session folded once after the turn's events (before any
   * after-turn hook wrote), shared by every hook of the step; a hook that
   * needs what an earlier hook wrote reads the store itself.
   */
  afterTurn(ctx: RunContext, journal: RunJournal, turn: Turn | null, snap: SessionSnapshot): TurnVerdict | Promise<TurnVerdict>;
}

/**
 * After the run, before its ending is written down: may record what the
 * ending implies (revisits to retry, a report to a parent) and may replace
 * the ending. Runs for every ending except a lost lease.
 */
export interface AfterRunHook {
  /** `snap`: the session folded once after the loop (before any after-run hook wrote), shared as afterTurn's is. */
  afterRun(ctx: RunContext, journal: RunJournal, ending: Ending, snap: SessionSnapshot): Ending | Promise<Ending>;
}

/**
 * After the run's ending is written and the session folded again (`after`):
 * what the run's ending means beyond the run (a child's report to its
 * parent's log). Outside the run's bracket: it writes through the store, not
 * the journal, and must be safe to repeat (a crash between the ending and it
 * is repaired by doing it again). Must not throw; a failure is its own to
 * repair later. Not called after a lost lease.
 */
export interface AfterCloseHook {
  afterClose(rt: Runtime, sessionId: string, after: SessionSnapshot, ending: Ending): void;
}

/**
 * A limit checked before each model request (bounds[]): the ending the run
 * stops with when it is reached (it records why in the journal), null while
 * it holds. Checked in list order; the first ending wins.
 */
export interface Bound {
  check(ctx: RunContext, journal: RunJournal): Ending | null;
}

/**
 * Sees the run as it goes, without changing it (observers[]): each step,
 * each model request and how it ended, each tool call and its result. For
 * tracing and metrics. Must not throw (a throw is swallowed, and the run goes
 * on), must not write to the journal, and should be quick: it runs on the
 * daemon's thread between the run's own steps.
 */
export interface RunObserver {
  step?(ctx: RunContext, n: number): void;
  request?(ctx: RunContext, req: ModelRequest): void;
  reply?(ctx: RunContext, req: ModelRequest, outcome: { response: ModelResponse } | { error: ModelError }, ms: number): void;
  toolCall?(ctx: RunContext, use: SessionEvent, result: { text: string; isError: boolean } | null, ms: number): void;
}

/**
 * A section of the system prompt (promptSections[]), after the agent's own
 * `system`, in list order. Rendered once per run, when its first request is
 * made, and the same for every request of it: each request repeats the last
 * as its prefix (the prompt cache). null leaves it out. Must not throw: what
 * it cannot read it leaves out.
 */
export interface PromptSection {
  name: string;
  render(ctx: RunContext): string | null;
}

export interface LoopHooks {
  /** The model (the registry's provider for the agent's `provider`). */
  model: ModelProvider;
  context: ContextStrategy;
  tools: ToolPolicy;
  steering: Steering;
  bounds: readonly Bound[];
  afterTurn: readonly AfterTurnHook[];
  afterRun: readonly AfterRunHook[];
  afterClose: readonly AfterCloseHook[];
  promptSections: readonly PromptSection[];
  observers: readonly RunObserver[];
}
