/**
 * The shared shape of one run: what wake() sets up and the harness uses.
 * Also the Runtime (what every run needs from outside) and the result
 * record wake() returns.
 */
import type { Home, SessionPaths } from '../home.js';
import type { Deps } from '../deps.js';
import type { SessionStore } from '../store/session-store.js';
import type { LoadedAgent, LoadedEnvironment } from '../definitions.js';
import type { ModelProvider } from '../model/provider.js';
import type { ModelUsage, NewEvent, SessionEvent, SessionSnapshot, SessionStatus, StopReason, Trigger } from '../schema/index.js';
import type { RunEnvironment } from './environment.js';
import type { ToolCatalog } from '../tools/catalog.js';
import type { Sandbox } from '../sandbox/sandbox.js';
import type { LogWindow } from './log-window.js';
import type { RuntimeFiles } from './runtime-files.js';
import type { Skill } from './skills.js';

export interface Runtime {
  home: Home;
  store: SessionStore;
  deps: Deps;
}

/** Why a run was cut short. The reason decides how the run is closed in the log. */
export type AbortReason =
  | { kind: 'interrupt' }
  | { kind: 'shutdown' }
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
  started_at: string;
  duration_ms: number;
}

export interface RunState {
  rt: Runtime;
  sessionId: string;
  paths: SessionPaths;
  runId: string;
  trigger: Trigger;
  wakeReason: string;
  startSnapshot: SessionSnapshot;
  agent: LoadedAgent;
  environment: LoadedEnvironment;
  env: RunEnvironment;
  provider: ModelProvider;
  catalog: ToolCatalog;
  skills: Skill[];
  sandbox: Sandbox;
  window: LogWindow;
  files: RuntimeFiles;
  controller: AbortController;
  abortReason: () => AbortReason | null;
  /** Cuts the run short; the first reason wins. */
  abort(reason: AbortReason): void;
  /** Loop guards: identical tool calls in this run, and empty replies in a row. */
  callCounts: Map<string, number>;
  emptyReplies: number;
  /** An agent.thread_context_compacted was recorded in this run. */
  compacted: boolean;
  /** Appends events stamped with this run's wake_id; returns them as written. */
  emit(events: NewEvent[]): SessionEvent[];
  written: SessionEvent[];
  usage: RunUsage;
  toolCalls: number;
  errors: string[];
}
