/**
 * The CLI two ways, with one result shape ({ code, stdout, stderr }):
 *
 * - `cli()` runs the built binary (dist/cli/main.js, built by `npm test`'s
 *   pretest) as a child process, the way a person would. Keep it for what
 *   only a process shows: the real entry point, exit codes set by main.ts,
 *   signals, a TTY, several writers at once.
 * - `cliInProcess()` calls runCli (src/cli/run.ts) in this process with
 *   streams that collect the output: the same parsing, commands, wording and
 *   exit codes, without paying a Node start-up per call (about 0.3-0.5 s on
 *   a loaded 2-core machine, where a file may make dozens of calls).
 *
 * Both see the same environment: this process's, minus OPENBOA_HOME, plus
 * `env`; and the same working directory: `cwd`, else the home, else the repository.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { Readable, Writable } from 'node:stream';
import { runCli } from '../../src/cli/run.js';
import { REPO } from './home.js';

export const CLI = path.join(REPO, 'dist', 'cli', 'main.js');

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  home?: string;
  /** What stdin holds (empty when not given); it is closed after it. */
  input?: string;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

function envOf(opts: CliOptions): NodeJS.ProcessEnv {
  const env = { ...process.env, ...opts.env };
  delete env.OPENBOA_HOME;
  if (opts.env?.OPENBOA_HOME) env.OPENBOA_HOME = opts.env.OPENBOA_HOME;
  return env;
}

const argvOf = (args: string[], opts: CliOptions) => [...(opts.home ? ['--home', opts.home] : []), ...args];
const cwdOf = (opts: CliOptions) => opts.cwd ?? opts.home ?? REPO;

export function cli(args: string[], opts: CliOptions = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...argvOf(args, opts)], {
      env: envOf(opts),
      cwd: cwdOf(opts),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(opts.input ?? '');
  });
}

/** A stream that keeps what is written to it, like a pipe to a reader that reads everything (not a TTY). */
class Collect extends Writable {
  text = '';

  override _write(chunk: Buffer | string, _enc: BufferEncoding, done: (e?: Error | null) => void): void {
    this.text += chunk.toString();
    done();
  }
}

/**
 * runCli in this process. `signal` stands for SIGINT/SIGTERM (never sent
 * when not given). Each call gets its own streams, environment and deps, as
 * a new process would; runCli keeps no state between calls.
 */
export async function cliInProcess(args: string[], opts: CliOptions & { signal?: AbortSignal } = {}): Promise<CliResult> {
  const stdout = new Collect();
  const stderr = new Collect();
  const code = await runCli(argvOf(args, opts), {
    stdout,
    stderr,
    stdin: Readable.from(opts.input ? [Buffer.from(opts.input)] : []),
    env: envOf(opts),
    cwd: cwdOf(opts),
    signal: opts.signal ?? new AbortController().signal,
  });
  // As a process's output is whole once it has exited: every write made so far has landed.
  await Promise.all([stdout, stderr].map((s) => new Promise((done) => s.end(done))));
  return { code, stdout: stdout.text, stderr: stderr.text };
}
