/**
 * The shapes of one run: the Runtime (what every run needs from outside),
 * the immutable RunContext the loop and its hooks read, the RunControl that
 * cuts a run short, how a run ends (Ending), and the record wake() returns.
 * What a run writes and counts lives in the RunJournal (journal.ts).
 */
import type { Home, SessionPaths } from '../foundation/home.js';
import type { Deps } from '../foundation/deps.js';
import type { SessionStore } from '../store/session-store.js';
import type { LoadedAgent, LoadedEnvironment } from '../definitions/definitions.js';
import type { EvaluationResult, ModelUsage, SessionEvent, SessionSnapshot, SessionStatus, StopReason, Trigger } from '../schema/index.js';
import type { RunEnvironment } from './environment.js';
import type { ToolCatalog } from '../tools/catalog.js';
import type { Sandbox } from '../sandbox/sandbox.js';
import type { LogWindow } from './log-window.js';
import type { RuntimeFiles } from './runtime-files.js';
import type { Skill } from './skills.js';
import type { LoopHooks } from './loop-hooks.js';
import type { RunState } from './run-state.js';

export interface Runtime {
  home: Home;
  store: SessionStore;
  deps: Deps;
}

/** Why a run was cut short. The reason decides how the run is closed in the log. */
export type AbortReason =
  | { kind: 'interrupt' }
  | { kind: 'shutdown' }
  /** A user.pause arrived: the run stops at its next step (pause-steering.ts). */
  | { kind: 'paused' }
  | { kind: 'deadline'; seconds: number }
  | { kind: 'lease_lost'; message: string }
  /** The log refused the run's own opening record: it writes nothing more (see wake.ts). */
  | { kind: 'log_refused'; message: string };

export interface WakeOptions {
  /** What caused the run; default: recovery, event or wake_queue, from what is pending. */
  trigger?: Trigger;
  /** Aborts the run; its `reason` should be an AbortReason. */
  signal?: AbortSignal;
  /** Stale time of the lease (tests shorten it). */
  leaseStaleMs?: number;
  /** Called once the run holds the lease and will execute (not for skipped runs). */
  onStart?: (info: { wakeId: string; trigger: Trigger }) => void;
  /** Retry a failed run now, without waiting out its backoff (its cause was fixed, e.g. a definition). */
  retryNow?: boolean;
  /** Called with the events a run writes, as it writes them (after redaction). Must not throw. */
  onEvents?: (events: readonly SessionEvent[]) => void;
  /** Changes the run's loop hooks (default: defaultHooks) — for embedders and tests; capabilities add theirs in default-hooks.ts. */
  hooks?: (defaults: LoopHooks, ctx: RunContext) => LoopHooks;
}

export interface RunUsage extends ModelUsage {
  model_requests: number;
}

export interface WakeResult {
  session_id: string;
  outcome: 'executed' | 'skipped';
  /** Why nothing ran: nothing_pending, requires_action, rescheduled, terminated. */
  skip_reason: string | null;
  wake_id: string | null;
  trigger: Trigger | null;
  status: SessionStatus;
  /** The session's parent, for a child (its run's report goes there when it ends idle); null otherwise. */
  parent_session_id: string | null;
  stop_reason: StopReason | null;
  retry_at: string | null;
  processed_event_ids: string[];
  wakes_consumed: string[];
  wakes_scheduled: string[];
  /** Messages of the session.error events this run appended. */
  errors: string[];
  /**
   * Why the run failed, when it did: `invalid_definition` (the agent or
   * environment does not load), `run_failed` (a bug or an I/O failure), or
   * the code of the error that ended it (rescheduled, or retries_exhausted).
   * null for a run that ended cleanly or was skipped.
   */
  failure: { code: string; message: string } | null;
  usage: RunUsage;
  tool_calls: number;
  /**
   * The outcome evaluations this run ended (its span.outcome_evaluation_end
   * events, in order; `iteration` counts from 0 as in the log). [] when it
   * graded nothing.
   */
  outcome_evaluations: Array<{ outcome_id: string; iteration: number; result: EvaluationResult }>;
  started_at: string;
  duration_ms: number;
}

/**
 * Cuts a run short. The first reason wins; the signal reaches the model
 * request, the shell and every tool.
 */
export class RunControl {
  private readonly controller = new AbortController();
  private why: AbortReason | null = null;
  private mute = false;

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  reason(): AbortReason | null {
    return this.why;
  }

  /** The first reason wins the run's ending; a lost lease or a refusing log silences it whatever came first. */
  abort(reason: AbortReason): void {
    if (reason.kind === 'lease_lost' || reason.kind === 'log_refused') this.mute = true;
    if (this.why) return;
    this.why = reason;
    this.controller.abort(reason);
  }

  /**
   * Nothing more may be written: another process may own the log now, or
   * the log refuses this run. Set by such a reason even when the run was
   * already stopping for another (a shutdown, an interrupt, its deadline).
   */
  get silenced(): boolean {
    return this.mute;
  }
}

/**
 * What one run works with, fixed when it opens: who, where, under which
 * definitions, with which tools and sandbox. Nothing in it is reassigned
 * during the run; what changes (events written, usage, errors) is in the
 * journal, and per-run state of a hook lives in a slot of `state`.
 */
export interface RunContext {
  readonly rt: Runtime;
  readonly sessionId: string;
  readonly paths: SessionPaths;
  readonly runId: string;
  readonly trigger: Trigger;
  readonly wakeReason: string;
  /** The session as folded before the run opened. */
  readonly startSnapshot: SessionSnapshot;
  readonly agent: LoadedAgent;
  readonly environment: LoadedEnvironment;
  readonly env: RunEnvironment;
  readonly catalog: ToolCatalog;
  readonly skills: Skill[];
  /** Where the tools act: the shell and the files under /workspace (and the other mounts). */
  readonly sandbox: Sandbox;
  /** The tail of the log the conversation is rebuilt from (refreshed from the fold at each step). */
  readonly window: LogWindow;
  readonly files: RuntimeFiles;
  readonly control: RunControl;
  /** The hooks' per-run state (run-state.ts): made with the run, dropped with it. */
  readonly state: RunState;
}

/** How a run ends, before wake() writes it down. */
export type Ending =
  | { kind: 'idle'; stop: StopReason; details?: { category: string | null; explanation: string | null } | null; terminalError?: boolean }
  | { kind: 'rescheduled'; reason: string; retryAt: string }
  | { kind: 'interrupted' }
  | { kind: 'lease_lost' };
