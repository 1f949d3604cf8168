/**
 * The loop's extension points. The loop (loop.ts) owns the order of one
 * step: steer → bounds → context → model → record the reply → tools →
 * after-turn; everything a capability changes about a run is one of these
 * hooks, written as a module of its own and listed in defaultHooks()
 * (default-hooks.ts). A hook reads the immutable RunContext and writes only
 * through the RunJournal (an observer writes nothing). What it remembers for
 * the length of a run lives in the hook object, built fresh for every run,
 * or in a typed slot of ctx.state (run-state.ts) when it is shared: never in
 * a module-level map. After-turn and after-run hooks get the step's
 * snapshot rather than reading the store again.
 */
import type { ModelError, ModelProvider, ModelRequest, ModelResponse, ReplyDelta } from '../model/provider.js';
import type { NewEvent, SessionEvent, SessionSnapshot } from '../schema/index.js';
import type { ToolOutput } from '../tools/tool.js';
import type { ConversationView } from './conversation.js';
import type { RunJournal, RetryStatus } from './journal.js';
import type { Ending, RunContext, Runtime } from './run-context.js';
import type { LoadedAgent, LoadedEnvironment } from '../definitions/definitions.js';
import type { RunEnvironment } from './environment.js';
import type { Sandbox, SandboxSpec } from '../sandbox/sandbox.js';
import type { RunPlan } from './plan.js';
import type { ToolSource } from '../tools/tool-source.js';
import type { SessionErrorType } from './failed-attempt.js';

export type ToolUseEvent = Extract<SessionEvent, { type: 'agent.tool_use' }>;

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

/**
 * How a tool call of a reply is filed when the reply is recorded: a custom
 * tool (its client answers), or a tool with its permission. `record` is set
 * for a tool a service brings (an MCP server's): the event it is logged as;
 * otherwise it is an agent.tool_use.
 */
export type Classification =
  | { kind: 'custom' }
  | { kind: 'tool'; permission: 'allow' | 'ask' | 'deny'; record?: (call: { modelToolUseId: string; input: unknown; permission: 'allow' | 'ask' | 'deny' }) => NewEvent };

/** Runs one allowed (or confirmed) call; every failure is an error result (the run records it). */
export type ToolExecutor = (ctx: RunContext, journal: RunJournal, use: SessionEvent) => Promise<ToolOutput>;

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
 * permission may have changed since it was asked); executor() says what
 * runs a call that is allowed.
 */
export interface ToolPolicy {
  /** `input` is the call's input as the model gave it (the escalate policy reads it to resolve a confident escalation by itself). */
  classify(name: string, input?: unknown): Classification;
  /** `input` as in classify(): a refusal may depend on it (a call whose arguments are not JSON). */
  refusal(name: string, input?: unknown): string;
  beforeCall(use: ToolUseEvent): CallDecision;
  permitsNow(name: string): { ok: true } | { ok: false; why: string };
  /** What runs a logged tool use: a built-in's, or its service's executor (an MCP server's). */
  executor(use: SessionEvent): ToolExecutor;
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
 * Sees the run as it goes, without changing it (observers[]): the run's
 * start and end, every batch of events it writes, each step, each model
 * request and how it ended, each tool call and its result. For tracing and
 * metrics. Must not throw (a throw is swallowed, and the run goes on), must
 * not write to the journal or the log, and should be quick: it runs on the
 * daemon's thread between the run's own steps.
 *
 * Order, for one run: runStart once, before the run's opening record is
 * written; then events (the opening first) interleaved with step, request,
 * reply and toolCall as they happen; runEnd once, last. A run whose
 * definitions do not load has no hooks, and no observer sees it.
 */
export interface RunObserver {
  /** The run will do its work: `plan` is what it takes in (events, revisits), `ctx.window` has the log up to them. */
  runStart?(ctx: RunContext, plan: RunPlan): void;
  /**
   * Each batch of events the run writes, as written (redacted, with ids and
   * times), in log order: the opening, compactions, outcome evaluations,
   * errors and retries, confirmations settled, children spawned, the ending.
   * Not called once the run is silenced (it writes nothing then).
   */
  events?(ctx: RunContext, events: readonly SessionEvent[]): void;
  step?(ctx: RunContext, n: number): void;
  request?(ctx: RunContext, req: ModelRequest): void;
  /**
   * A piece of the reply's text as the model streams it (provider.ts
   * ReplyDelta), between request() and reply(): `eventId` is the id the
   * block's event (agent.message, agent.thinking) carries when the reply is
   * recorded; a reply that fails, or a block recorded as nothing (empty
   * text), has no such event. The text is the model's, not yet redacted: an
   * observer that shows it redacts it (run/preview-publisher.ts). Only
   * asked for when some observer has it: the loop passes no sink otherwise.
   */
  delta?(ctx: RunContext, d: ReplyDelta & { eventId: string }): void;
  reply?(ctx: RunContext, req: ModelRequest, outcome: { response: ModelResponse } | { error: ModelError }, ms: number): void;
  /** Before a call that was allowed runs (not for denied, refused or asked ones); toolCall follows with its result. */
  toolStart?(ctx: RunContext, use: SessionEvent): void;
  toolCall?(ctx: RunContext, use: SessionEvent, result: { text: string; isError: boolean } | null, ms: number): void;
  /**
   * The run is over: its ending is in the log (or was lost with the lease:
   * `ending.kind` says so), the after-close hooks have run, and `after` is
   * the session folded once more. Called once for every run runStart was,
   * whatever happened in between (a run that threw has a rescheduled ending).
   */
  runEnd?(ctx: RunContext, ending: Ending, after: SessionSnapshot): void;
}

/** Tells each observer, in list order; a throw is the observer's, never the run's. */
export function observe(observers: readonly RunObserver[], see: (o: RunObserver) => void): void {
  for (const o of observers) {
    try {
      see(o);
    } catch {
      // an observer never changes the run
    }
  }
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

/** What a run is made of before its context is built, for a service to add to (RunService.provide). */
export interface ServiceSetup {
  rt: Runtime;
  agent: LoadedAgent;
  environment: LoadedEnvironment;
  sessionId: string;
  runId: string;
  env: RunEnvironment;
}

/**
 * Whatever lives for the whole run (services[]): an MCP hub, the memory
 * versions wrapped around the sandbox, later an egress proxy or a tracer.
 * Each phase is optional; the run calls them in this order, each once:
 *
 * - secrets(): the secret values it brings, before the run's environment is
 *   built (the run's redactor must know them); `run` names the session and
 *   the run, for a secret bound to them;
 * - sandboxEnv(): once the environment is known, the variables it adds to
 *   the sandbox's environment (each one whose value is secret must be among
 *   what secrets() returned); must not throw; {} when it adds none;
 * - provide(): once the environment is known, before the context: tools
 *   beside the built-ins (a ToolSource), a change of the sandbox's spec
 *   before it is built (the egress proxy's socket and variables), a
 *   wrapper of the run's sandbox;
 * - open(): with the run's bracket open, before anything may call its tools
 *   (not for a run that only closes for an interrupt); may be async;
 * - startFiles() / toolsFile(): the runtime/ files it keeps as the run
 *   starts, and its lines of runtime/tools.json;
 * - close(): when the run's work is over, whatever happened (after a
 *   failure too); must not throw, and must be safe to call once more.
 *
 * A service is built fresh for every run (defaultServices()), so its state
 * lives in the object. One added by WakeOptions.hooks gets open and close
 * only: the run's environment and context were made before.
 */
export interface RunService {
  name: string;
  secrets?(rt: Runtime, agent: LoadedAgent, run: { sessionId: string; runId: string }): Record<string, string>;
  sandboxEnv?(x: ServiceSetup): Record<string, string>;
  provide?(x: ServiceSetup): { tools?: ToolSource; sandboxSpec?: (spec: SandboxSpec) => SandboxSpec; sandbox?: (s: Sandbox) => Sandbox };
  open?(ctx: RunContext, journal: RunJournal): void | Promise<void>;
  startFiles?(ctx: RunContext): void;
  toolsFile?(): Array<Record<string, unknown>>;
  close?(ctx: RunContext): void;
}

/**
 * Before a run does the work it took in (gates[]), once its bracket is open:
 * true when the work must not be done (it was asked for before an ancestor
 * was interrupted), and the run then closes as an interrupted one. A gate
 * that says so records why (in the session's log, through the journal).
 */
export interface RunGate {
  stops(ctx: RunContext, journal: RunJournal, plan: RunPlan): boolean;
}

/**
 * Before a run is planned, under the lease (preparers, in defaultPreparers()):
 * brings the session's queue in line with its definitions (a heartbeat in
 * agent.yaml). True when it wrote, so the session is folded again. Must not
 * throw for a definition that does not load (the run reports that itself).
 */
export type SessionPreparer = (rt: Runtime, sessionId: string, snap: SessionSnapshot) => boolean;

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
  services: readonly RunService[];
  gates: readonly RunGate[];
}
