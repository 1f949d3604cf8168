/**
 * openboa's public API: what a program that embeds the runtime (or the tests)
 * imports, as `import { wake, SessionStore } from 'openboa'`. Everything else
 * under src/ is internal and may move.
 */
export { Home, resolveHome, type SessionPaths } from './core/foundation/home.js';
export { systemDeps, type Deps } from './core/foundation/deps.js';
export { SessionStore, START, type StoreDeps, type Cursor, type EventLines, type FollowOptions } from './core/store/session-store.js';
export { createSession } from './core/ops/create-session.js';
export { sendMessage, interruptSession, updateSession, confirmToolUse, answerCustomTool, defineOutcome, scheduleRevisit, sessionStatus, type SessionStatus } from './core/ops/session-ops.js';
export { resolveEscalation } from './core/ops/resolve-escalation.js';
export { pauseSession, resumeSession } from './core/ops/pause-ops.js';
export { archiveSession, deleteSession } from './core/ops/session-lifecycle.js';
export { watchTurn, type TurnEnd, type WatchTurnOptions } from './core/ops/turn-watch.js';
export { wake } from './core/run/wake.js';
export { runUntilSettled } from './core/run/run-until-settled.js';
export type { Runtime } from './core/run/run-context.js';
export type { WakeOptions, WakeResult } from './core/run/wake-api.js';
export { OpenboaError, type ErrorCode } from './core/foundation/errors.js';
export { Daemon, type DaemonOptions } from './daemon/daemon.js';
export { isFailure, type Sandbox, type SandboxFailure, type SandboxCode, type ExecResult, type SandboxFactory, type SandboxSpec } from './core/sandbox/sandbox.js';
export { hostSandbox, type HostSandboxOptions } from './core/sandbox/host-sandbox.js';
export { MemorySandbox, type MemorySandboxOptions, type MemoryMount, type MemoryExec, type ExecAnswer } from './core/sandbox/memory-sandbox.js';
export { lockHome, runningDaemon } from './daemon/home-lock.js';
export { withTraceparent, parseTraceparent, formatTraceparent } from './core/telemetry/traceparent.js';
export type { Telemetry, RunMetricsSink } from './core/telemetry/telemetry.js';
export * from './core/schema/index.js';
