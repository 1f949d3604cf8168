/**
 * openboa's public API: what a program that embeds the runtime (or the tests)
 * imports, as `import { wake, SessionStore } from 'openboa'`. Everything else
 * under src/ is internal and may move.
 */
export { Home, resolveHome, type SessionPaths } from './core/home.js';
export { systemDeps, type Deps } from './core/deps.js';
export { SessionStore, START, type StoreDeps, type Cursor, type EventLines, type FollowOptions } from './core/store/session-store.js';
export { createSession } from './core/create-session.js';
export { sendMessage, interruptSession, updateSession } from './core/session-ops.js';
export { wake } from './core/run/wake.js';
export type { Runtime, WakeOptions, WakeResult } from './core/run/run-context.js';
export { OpenboaError, type ErrorCode } from './core/errors.js';
export { Daemon, type DaemonOptions } from './daemon/daemon.js';
export { isFailure, type Sandbox, type SandboxFailure, type SandboxCode, type ExecResult } from './core/sandbox/sandbox.js';
export { hostSandbox, type HostSandboxOptions, type SandboxFactory } from './core/sandbox/host-sandbox.js';
export { MemorySandbox, type MemorySandboxOptions, type MemoryMount, type MemoryExec, type ExecAnswer } from './core/sandbox/memory-sandbox.js';
export { lockHome, runningDaemon } from './daemon/home-lock.js';
export * from './core/schema/index.js';
