/**
 * The shapes of one run: the Runtime (what every run needs from outside),
 * the immutable RunContext the loop and its hooks read, and how a run ends
 * (Ending). What cuts a run short is run-control.ts's; what wake() takes and
 * returns, wake-api.ts's; what a run writes and counts lives in the
 * RunJournal (journal.ts).
 */
import type { Home, SessionPaths } from '../foundation/home.js';
import type { Deps } from '../foundation/deps.js';
import type { SessionStore } from '../store/session-store.js';
import type { LoadedAgent, LoadedEnvironment } from '../definitions/definitions.js';
import type { SessionSnapshot, StopReason, Trigger } from '../schema/index.js';
import type { RunEnvironment } from './environment.js';
import type { ToolCatalog } from '../tools/catalog.js';
import type { Sandbox } from '../sandbox/sandbox.js';
import type { LogWindow } from './log-window.js';
import type { RuntimeFiles } from './runtime-files.js';
import type { Skill } from './skills.js';
import type { RunState } from './run-state.js';
import type { RunControl } from './run-control.js';

export interface Runtime {
  home: Home;
  store: SessionStore;
  deps: Deps;
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
