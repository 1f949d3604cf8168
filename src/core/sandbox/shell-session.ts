/**
 * The session's shell for the length of a run: started on the first bash
 * call, restarted if it died, killed when the run ends. Its facts are
 * rewritten in runtime/ after every command so the agent (and a person) can
 * reread them: shell.json (cwd, alive, last exit code, exported variables),
 * shell-history.jsonl, last-shell-output.txt. A new shell starts in the cwd
 * shell.json recorded and exports again the variables it recorded
 * (keptExports: never a secret), so `cd` and `export` outlive the run: a
 * revisit an hour later, or after the daemon restarted, finds the shell as
 * the agent left it. `restart` starts clean.
 */
import fs from 'node:fs';
import path from 'node:path';
import * as z from 'zod';
import { iso } from '../foundation/clock.js';
import type { Redactor } from '../foundation/redact.js';
import { writeFileAtomic, writeJsonAtomic } from '../store/atomic-file.js';
import { appendLines } from '../store/jsonl.js';
import { PtyShell, type ExecResult } from './pty-shell.js';
import type { SandboxSpec } from './sandbox.js';
import { runOnce, type OneShotResult } from './one-shot.js';
import { readStateFile } from '../foundation/state-file.js';

export const ShellState = z.object({
  cwd: z.string(),
  alive: z.boolean(),
  last_exit_code: z.number().int().nullable(),
  commands: z.number().int().nonnegative(),
  isolation: z.string(),
  updated_at: z.string(),
  /** Variables the agent's shell exported (beyond its starting environment), exported again by the next shell: see keptExports. */
  exported: z.record(z.string(), z.string()).default({}),
});
export type ShellState = z.infer<typeof ShellState>;

/** What the session's shell is made of: the run's sandbox spec (sandbox.ts). */
export type ShellSessionOptions = SandboxSpec;

/** Variables of the shell itself or of the protocol: never carried to the next shell. */
const SHELL_OWN = new Set(['PWD', 'OLDPWD', 'SHLVL', '_', 'HISTSIZE', 'HISTFILE', 'HISTFILESIZE', 'PS1', 'PS2', 'PS4', 'PROMPT_COMMAND', 'IFS', 'SHELLOPTS', 'BASHOPTS', 'BASH_ENV', 'ENV', 'TERM', 'COLUMNS', 'LINES']);
/** What one shell may carry to the next: at most this many variables, each value and all of them at most this many bytes. */
export const EXPORTS_MAX = { count: 200, valueBytes: 16 * 1024, totalBytes: 64 * 1024 };

/**
 * The variables a shell exported that the next one gets: those not in the
 * environment it started with (or changed since), minus the shell's own
 * (PWD, SHLVL, ...), the protocol's (__ob*) and ours (OPENBOA_*, given
 * afresh to every shell), and never one whose name or value holds a secret or
 * a piece of one (the redactor would change it). Bounded by EXPORTS_MAX;
 * past it, the rest are not carried.
 */
export function keptExports(env: Record<string, string>, base: Record<string, string>, redactor: Pick<Redactor, 'text'>): Record<string, string> {
  const out: Record<string, string> = {};
  let count = 0;
  let total = 0;
  for (const [k, v] of Object.entries(env).sort(([a], [b]) => a.localeCompare(b))) {
    if (base[k] === v || SHELL_OWN.has(k) || k.startsWith('__ob') || k.startsWith('OPENBOA_')) continue;
    if (redactor.text(k) !== k || redactor.text(v) !== v) continue;
    const bytes = Buffer.byteLength(k) + Buffer.byteLength(v);
    if (Buffer.byteLength(v) > EXPORTS_MAX.valueBytes || count >= EXPORTS_MAX.count || total + bytes > EXPORTS_MAX.totalBytes) continue;
    out[k] = v;
    count += 1;
    total += bytes;
  }
  return out;
}

export class ShellSession {
  private shell: PtyShell | null = null;
  private state: ShellState;

  constructor(private readonly o: ShellSessionOptions) {
    this.state = readShellState(o.runtimeDir) ?? {
      cwd: o.homeDir,
      alive: false,
      last_exit_code: null,
      commands: 0,
      isolation: o.isolation,
      updated_at: iso(o.clock.now()),
      exported: {},
    };
    this.state.alive = false;
    this.state.isolation = o.isolation;
  }

  get started(): boolean {
    return this.shell !== null;
  }

  /** Runs a command, starting (or restarting) the shell as needed. */
  async run(command: string, opts: { timeoutMs: number; signal: AbortSignal }): Promise<ExecResult> {
    if (this.o.unavailable) throw new Error(`no sandbox: ${this.o.unavailable}`);
    if (!this.shell || !this.shell.alive) await this.startShell(this.state.cwd);
    const shell = this.shell as PtyShell;
    const r = await shell.exec(command, opts);
    this.state = {
      ...this.state,
      cwd: r.shellDied ? this.state.cwd : r.cwd,
      alive: shell.alive,
      last_exit_code: r.exitCode,
      commands: this.state.commands + 1,
      updated_at: iso(this.o.clock.now()),
      // A shell that did not report its variables (it died, or they were too many) keeps the last ones it did.
      exported: r.env ? keptExports(r.env, this.o.env, this.o.redactor) : this.state.exported,
    };
    this.record(command, r);
    return r;
  }

  /**
   * Runs one command in a sandbox of its own at the sandbox's home
   * (one-shot.ts): no terminal, its exit status from the kernel, everything
   * it started killed when it ends. The session's shell, its state and its
   * history are untouched.
   */
  async once(command: string, opts: { timeoutMs: number; signal: AbortSignal }): Promise<OneShotResult> {
    if (this.o.unavailable) throw new Error(`no sandbox: ${this.o.unavailable}`);
    const { redact: _r, ...config } = this.config(this.o.homeDir);
    return runOnce(config, command, opts);
  }

  /** A fresh shell at the sandbox's home, without the variables earlier shells exported. */
  async restart(): Promise<void> {
    if (this.o.unavailable) throw new Error(`no sandbox: ${this.o.unavailable}`);
    this.close();
    this.state = { ...this.state, exported: {} };
    await this.startShell(this.o.homeDir);
    this.state = { ...this.state, cwd: this.o.homeDir, alive: true, updated_at: iso(this.o.clock.now()) };
    this.writeState();
  }

  /** Kills the shell and everything it started. Idempotent. */
  close(): void {
    if (this.shell) {
      this.shell.kill();
      this.shell = null;
    }
    if (this.state.alive) {
      this.state = { ...this.state, alive: false, updated_at: iso(this.o.clock.now()) };
      this.writeState();
    }
  }

  private async startShell(cwd: string): Promise<void> {
    // A recorded cwd that no longer exists (or escaped) falls back to home.
    const start = this.cwdExists(cwd) ? cwd : this.o.homeDir;
    this.shell = await PtyShell.start({ ...this.config(start), exports: this.state.exported });
    this.state = { ...this.state, cwd: start, alive: true };
  }

  private config(cwd: string) {
    return {
      isolation: this.o.isolation,
      network: this.o.network,
      egress: this.o.egress ?? null,
      mounts: this.o.mounts,
      env: this.o.env,
      cwd,
      hostCwd: this.o.workspaceHost,
      redact: (x: string) => this.o.redactor.text(x),
      clock: this.o.clock,
    };
  }

  /**
   * Whether to start in the recorded cwd. Under bwrap it is not checked on
   * the host at all: the recorded cwd is what the agent's shell reported, so
   * looking it up on the host would follow the agent's symlinks there (a
   * probe of which host paths exist). The shell's own `cd <cwd> || cd`
   * decides, inside the sandbox. Unconfined, the shell lives on the host.
   */
  private cwdExists(cwd: string): boolean {
    if (this.o.isolation !== 'bwrap') return fs.existsSync(cwd);
    return path.posix.isAbsolute(cwd);
  }

  private writeState() {
    try {
      // Redacted as everything in runtime/: the cwd is the agent's (a directory named after a secret is a secret).
      writeJsonAtomic(path.join(this.o.runtimeDir, 'shell.json'), this.o.redactor.deep(this.state), { durable: false });
    } catch {
      // runtime/ is a cache
    }
  }

  private record(command: string, r: ExecResult) {
    const red = this.o.redactor;
    this.writeState();
    try {
      appendLines(path.join(this.o.runtimeDir, 'shell-history.jsonl'), [
        JSON.stringify(
          red.deep({
            at: iso(this.o.clock.now()),
            command,
            exit_code: r.exitCode,
            timed_out: r.timedOut,
            interrupted: r.interrupted,
            shell_died: r.shellDied,
            duration_ms: r.durationMs,
            cwd: this.state.cwd,
            output_chars: r.output.length,
          }),
        ),
      ]);
      writeFileAtomic(path.join(this.o.runtimeDir, 'last-shell-output.txt'), red.text(r.output), { durable: false });
    } catch {
      // runtime/ is a cache
    }
  }
}

export function readShellState(runtimeDir: string): ShellState | null {
  try {
    // Not through a symlink, nor blocking on a FIFO: without bubblewrap the agent can write runtime/.
    const f = readStateFile(path.join(runtimeDir, 'shell.json'));
    if (!f) return null;
    const r = ShellState.safeParse(JSON.parse(f.text));
    return r.success ? r.data : null;
  } catch {
    return null;
  }
}
