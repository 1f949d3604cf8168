/**
 * The sandbox port: everything the built-in tools do to the agent's
 * machine, and nothing else. A run holds one Sandbox; the tools reach files
 * and the shell only through it. Two implementations:
 *
 * - `hostSandbox()` (./host-sandbox.ts): the session's bash in a pty under
 *   bubblewrap, unshare-net or unconfined, and the file operations done by
 *   the daemon on the host with a race-free walk beneath the mounts
 *   (./virtual-fs.ts).
 * - `MemorySandbox` (./memory-sandbox.ts): files in a Map, commands answered
 *   by a function the test supplies. For unit tests of the tools.
 *
 * tests/core/sandbox-contract.test.ts runs one scenario against both, so
 * the fake says what the real one says.
 *
 * Paths are sandbox paths: absolute (/workspace/..., /runtime/..., a mount
 * of the environment) or relative to /workspace. Every path a result or an
 * error names is a sandbox path, never a host path.
 *
 * Failures are data. An operation resolves with its result or with a
 * SandboxFailure whose `error` is the text the model reads; it rejects only
 * on a bug. `code` is what a caller may branch on.
 *
 * Every operation takes an AbortSignal. The long ones (exec, glob, grep)
 * stop when it aborts and say so (exec: `interrupted`; glob and grep: the
 * failure "glob was interrupted" / "grep was interrupted"). The bounded ones
 * (read, write, modify, list, restart) may run to completion regardless:
 * on the host they are a few system calls, and a tool's output (which
 * limitOutput saves with write) is recorded even when the run was stopped.
 *
 * Why these operations and not others:
 * - There is no `stat`. A tool that stats and then reads checks one thing
 *   and uses another (STYLE 12). `read` refuses a directory with code
 *   EISDIR, and the read tool then lists it; each operation is one walk
 *   that opens once and uses what it opened.
 * - `modify` is edit's read-and-write on one open file: the file edited is
 *   the file read, even while the agent's shell renames things around it.
 * - `glob` and `grep` are operations of their own, not loops of `list` and
 *   `read` in the tool: a search is one walk of descriptors on the host
 *   (a loop of path-based reads would walk again for every file, and could
 *   not see the walk's O_NOFOLLOW view), and a sandbox that lives elsewhere
 *   (a container, a VM) searches where the files are instead of shipping
 *   every file to the daemon. The tools keep the policy: the limits and
 *   deadlines come in as options, counts and flags (truncated, stopped at
 *   the byte budget) go back as data, and the tools word them.
 */
import type { Isolation, MountSpec } from './isolation.js';
import type { Redactor } from '../foundation/redact.js';
import type { Clock } from '../foundation/clock.js';
import type { NetworkPosture } from '../schema/index.js';

/** Why an operation failed: an errno name for what the file system said, or one of the named cases. */
export type SandboxCode =
  /** A path the sandbox does not allow: outside the mounts, a write to a read-only mount, a symlink loop. */
  | 'refused'
  /** A FIFO, socket or device where a regular file was expected. */
  | 'not_regular'
  /** A search root (glob) that is not a directory, or (grep) neither a file nor a directory. */
  | 'not_directory'
  /** A glob or grep pattern the sandbox will not run. */
  | 'invalid_pattern'
  /** The signal aborted a search. */
  | 'interrupted'
  /** A search reached its deadline. */
  | 'timed_out'
  /** No shell can run: no sandbox here, the shell did not start, or a memory sandbox without a handler. */
  | 'no_shell'
  /** A write larger than the mount allows (/memory: MEMORY_DOCUMENT_MAX_BYTES). */
  | 'too_large'
  /** Anything else (a worker that died, an I/O error without an errno). */
  | 'failed'
  /** What the file system said: ENOENT, ENOTDIR, EISDIR, EACCES, ... */
  | `E${string}`;

export interface SandboxFailure {
  readonly code: SandboxCode;
  /** The message the model reads; names sandbox paths only. */
  readonly error: string;
}

export const failure = (code: SandboxCode, error: string): SandboxFailure => ({ code, error });

/** Whether an operation's answer is a failure (no result type has an `error` field). */
export function isFailure(x: unknown): x is SandboxFailure {
  return typeof x === 'object' && x !== null && typeof (x as SandboxFailure).error === 'string' && typeof (x as SandboxFailure).code === 'string';
}

export interface OpOptions {
  signal: AbortSignal;
}

export interface ExecOptions extends OpOptions {
  /** The command is killed after this long (Ctrl-C, then the whole sandbox if it does not stop). */
  timeoutMs: number;
}

/**
 * One command's outcome. The output is what the shell printed, its middle
 * dropped past a few megabytes (the catalog then applies the environment's
 * output_limit_chars and saves the whole of what it got to a file).
 */
export interface ExecResult {
  output: string;
  /** null when the command did not finish (timeout, interrupt, shell died). */
  exitCode: number | null;
  timedOut: boolean;
  interrupted: boolean;
  /** The shell exited or was killed during the command; the next command starts a new one. */
  shellDied: boolean;
  /** The shell's working directory after the command (where the next one starts). */
  cwd: string;
}

export interface ReadOptions extends OpOptions {
  /** Content longer than this is not read (FileContent.data is null). */
  maxBytes: number;
}

export interface FileContent {
  /** The file read, as the sandbox names it (symlinks resolved). */
  virtual: string;
  /** The whole content, or null when the file holds more than maxBytes. */
  data: Buffer | null;
}

export interface Written {
  virtual: string;
  bytes: number;
}

export interface Modified {
  virtual: string;
  /** false when `change` returned null (the file was left as it was). */
  written: boolean;
}

/**
 * What edit does with a file's content: the new text to write, or null to
 * leave the file as it is. `content` is null when the file holds more than
 * maxBytes. Must not throw.
 */
export type Change = (content: Buffer | null, virtual: string) => string | null;

export interface ListOptions extends OpOptions {
  /** Entries returned at most; a directory of a million entries costs no more than this. */
  max: number;
}

export interface Listing {
  virtual: string;
  /** Sorted; a directory (or a mount point) with a trailing "/". */
  names: string[];
  /** There were more than `max` entries. */
  more: boolean;
}

export interface SearchOptions extends OpOptions {
  /** Where the search starts (default /workspace). */
  path?: string;
  /** Matching stops with a `timed_out` failure after this long. */
  timeoutMs: number;
  /** Entries a walk looks at before it stops (and says so). */
  maxEntries: number;
}

export interface GlobMatch {
  /** Sandbox path of a regular file. */
  virtual: string;
  mtimeMs: number;
}

export interface GlobResult {
  /**
   * Regular files whose path relative to the search root matches (picomatch,
   * dot files included, no extglobs), depth first with names sorted.
   * Symlinks are not followed; a mount below the root is searched as the
   * sandbox shows it.
   */
  files: GlobMatch[];
  /** The walk stopped after maxEntries entries. */
  truncated: boolean;
}

export interface GrepOptions extends SearchOptions {
  /** Lines returned at most (all matches are counted). */
  maxMatches: number;
  /** Files larger than this are skipped. */
  maxFileBytes: number;
  /** The search stops once it would read more than this in all. */
  maxTotalBytes: number;
}

export interface GrepResult {
  /** `path:line:text`, in walk order, at most maxMatches. Binary files (a NUL in the first 8000 bytes) are skipped. */
  lines: string[];
  /** Every matching line counted, including those not returned. */
  total: number;
  /** The search stopped at maxTotalBytes. */
  stoppedAtBytes: boolean;
  /** The walk stopped after maxEntries entries. */
  truncated: boolean;
}

export interface Sandbox {
  /** Runs a command in the session's persistent shell (cwd and exports carry over), starting it when needed. */
  exec(command: string, o: ExecOptions): Promise<ExecResult | SandboxFailure>;
  /** Kills the shell and starts a fresh one at the sandbox's home (/workspace). */
  restart(o: OpOptions): Promise<SandboxFailure | null>;
  /**
   * Runs a command in a shell of its own (same isolation, network, mounts
   * and environment), at the sandbox's home, and ends that shell: nothing
   * the persistent shell did (cwd, exports, jobs) reaches it, and nothing it
   * does reaches the persistent shell. For the outcome's check.
   */
  execFresh(command: string, o: ExecOptions): Promise<ExecResult | SandboxFailure>;
  /** Reads a regular file whole (EISDIR for a directory, not_regular for a FIFO or device). */
  read(path: string, o: ReadOptions): Promise<FileContent | SandboxFailure>;
  /** Creates or replaces a regular file, and its missing parent directories; refused on read-only mounts. */
  write(path: string, content: string, o: OpOptions): Promise<Written | SandboxFailure>;
  /** Reads an existing regular file and writes back what `change` makes of it, through one open file. */
  modify(path: string, change: Change, o: ReadOptions): Promise<Modified | SandboxFailure>;
  /** Lists a directory. */
  list(path: string, o: ListOptions): Promise<Listing | SandboxFailure>;
  /** Finds regular files under a directory by a glob pattern (relative to that directory). */
  glob(pattern: string, o: SearchOptions): Promise<GlobResult | SandboxFailure>;
  /** Searches the lines of a file, or of every regular file under a directory, for a JavaScript regular expression. */
  grep(pattern: string, o: GrepOptions): Promise<GrepResult | SandboxFailure>;
  /**
   * `text` with the host path of every mount replaced by its sandbox path,
   * where the agent cannot see host paths (under bubblewrap); `text` itself
   * elsewhere. Applied to every tool output before the model or the log sees it.
   */
  hideHostPaths(text: string): string;
  /**
   * Kills the shell and everything it started. Idempotent; the run calls it
   * when it ends, and an outcome's grading before it starts. A later exec
   * starts a new shell (in the cwd the last one recorded).
   */
  close(): void;
}

/**
 * What a run tells the sandbox it wants (Deps.sandbox builds one from it):
 * the isolation in force, the mounts (the shell binds them; the file
 * operations walk beneath them), the shell's environment and home, where
 * its facts go (runtime/), the run's redactor and clock, and why no shell
 * can run, if none can. A factory may ignore what it does not need (the
 * in-memory one ignores all of it).
 */
export interface SandboxSpec {
  isolation: Isolation;
  network: NetworkPosture;
  /**
   * network limited: the host path of the run's egress proxy socket (the
   * egress service sets it, egress/egress-service.ts). Absent, a limited
   * sandbox has no network at all.
   */
  egress?: string | null;
  mounts: MountSpec[];
  env: Record<string, string>;
  /** The sandbox's home: /workspace under bwrap, the host workspace otherwise. */
  homeDir: string;
  workspaceHost: string;
  runtimeDir: string;
  redactor: Redactor;
  /** Stamps the shell's facts and runs its deadlines. */
  clock: Clock;
  /** Set when no sandbox can run here: every command fails with this reason instead of running unconfined. */
  unavailable?: string | null;
}

/** Builds a run's sandbox (Deps.sandbox): hostSandbox in production (loaded when first needed, so it may be async), a MemorySandbox in tests. */
export type SandboxFactory = (spec: SandboxSpec) => Sandbox | Promise<Sandbox>;
