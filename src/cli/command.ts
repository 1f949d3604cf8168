/**
 * The shape of one CLI command and what it is handed. Each command's code
 * lives in its own file under src/cli/commands/ and exports `run`; its words,
 * arguments and help are a CommandSpec in command-catalog.ts, which imports the
 * code only when the command runs.
 */
import type { Readable } from 'node:stream';
import type { Home } from '../core/foundation/home.js';
import type { Deps } from '../core/foundation/deps.js';
import type { SessionStore } from '../core/store/session-store.js';
import type { Output } from './output.js';

export interface OptionSpec {
  type: 'string' | 'boolean';
  short?: string;
  description: string;
  /** Shown in usage, e.g. N, DIR. */
  value?: string;
  /** A string option that may be given more than once: its flag value is then every value, in order (string[]). */
  repeatable?: boolean;
}

export interface ArgSpec {
  name: string;
  required: boolean;
  description: string;
}

export interface CliContext {
  home: Home;
  deps: Deps;
  store: SessionStore;
  out: Output;
  json: boolean;
  stdin: Readable;
  /** Aborted on SIGINT/SIGTERM for long-running commands (events --follow, daemon). */
  signal: AbortSignal;
  /** The directory the command was run from (relative paths in arguments are resolved against it). */
  cwd: string;
}

/** A flag as parsed: a string option's value (every value, in order, for a repeatable one), a boolean's presence. */
export type FlagValue = string | string[] | boolean | undefined;
export type Flags = Record<string, FlagValue>;

export interface CommandInput {
  args: Record<string, string | undefined>;
  /** Positionals past the declared ones. */
  rest: string[];
  flags: Flags;
}

export interface CommandSpec {
  /** Words that select the command, e.g. ['session', 'create']. */
  path: string[];
  summary: string;
  args?: ArgSpec[];
  options?: Record<string, OptionSpec>;
  /** Extra lines for --help. */
  details?: string;
  /** Whether words past the declared arguments are accepted (joined into the last one). */
  rest?: boolean;
  /**
   * 'any': the command runs on any folder (init makes a home, doctor says
   * what is missing). Otherwise the home must be one (an agents/ or sessions/
   * folder in it), or the command is refused (exit 3) before it looks for
   * anything, so a mistyped --home is never an empty home.
   */
  home?: 'any';
  /**
   * The process runs for hours (the daemon): its V8 young generation is held
   * at its starting size from before the command's code loads
   * (young-generation.ts).
   */
  longLived?: true;
  /** Imports the command's code (called only when the command runs). */
  load(): Promise<CommandModule>;
}

/** What a file under src/cli/commands/ exports. */
export interface CommandModule {
  /** Returns the exit code (default 0). */
  run(ctx: CliContext, input: CommandInput): Promise<number | void>;
}

/** A mistake in how the command was called: exit 2, with the usage named. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

export function usageLine(c: CommandSpec): string {
  const args = (c.args ?? []).map((a) => (a.required ? `<${a.name}>` : `[${a.name}]`));
  const opts = Object.entries(c.options ?? {}).map(([k, o]) => `[--${k}${o.type === 'string' ? ` ${o.value ?? 'VALUE'}` : ''}]`);
  return ['openboa', ...c.path, ...args, ...opts].join(' ');
}
