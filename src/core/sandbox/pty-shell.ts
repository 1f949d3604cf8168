/**
 * One persistent bash in a node-pty, started inside the session's isolation.
 * `cd` and `export` survive between commands because every command is
 * `eval`ed by the same shell.
 *
 * Protocol. Each command is sent base64-encoded (in chunks, so no tty line
 * limit applies), evaluated with stdin from /dev/null, and framed by a start
 * and an end marker that carries the exit code and the new cwd. Markers carry
 * a per-shell nonce, so command output cannot fake them.
 *
 * Timeouts and interrupts: Ctrl-C goes to the foreground job, then a fresh
 * end marker is requested; if the shell does not answer within
 * KILL_GRACE_MS, every process of the sandbox is killed (the bwrap PID
 * namespace, or the pty's whole session) and the next command starts a new
 * shell. Every one of these deadlines runs on the injected clock.
 */
import { randomBytes } from 'node:crypto';
import type * as Pty from 'node-pty';

/** node-pty, loaded when the first shell starts (a native module: processes that never start a shell never load it). */
let ptyModule: Promise<typeof Pty> | null = null;
const loadPty = () => (ptyModule ??= import('node-pty'));
import type { Clock } from '../foundation/clock.js';
import type { ExecResult as SandboxExecResult } from './sandbox.js';
import { cutHead, cutTail } from '../foundation/text-cut.js';
import { isolatedCommand, type Isolation, type MountSpec } from './isolation.js';
import type { NetworkPosture } from '../schema/index.js';
import { assignLines, CHUNK, ENV_REPORT_MAX, exportScript, parseEnv } from './shell-env.js';
import { killSession } from './kill-session.js';

export interface ShellConfig {
  isolation: Isolation;
  network: NetworkPosture;
  /** network limited: the host path of the run's egress proxy socket (./egress-bridge.ts). */
  egress?: string | null;
  mounts: MountSpec[];
  /** The complete environment of the shell. */
  env: Record<string, string>;
  /** Working directory to start in: a sandbox path under bwrap, a host path otherwise. */
  cwd: string;
  /**
   * Secret redaction, applied before the middle of an enormous output is
   * dropped, so a secret cut in two by the drop never survives in halves.
   */
  redact?: (s: string) => string;
  /** Host directory the pty process starts in. */
  hostCwd: string;
  /**
   * Variables a shell of this session exported before (ShellSession keeps
   * them), exported again by the new shell inside the sandbox, never put in
   * the environment of the process that starts it (an LD_PRELOAD or a PATH
   * there would run the agent's code outside the sandbox).
   */
  exports?: Record<string, string>;
  /**
   * Every deadline of the shell (start, command timeout, the grace after
   * Ctrl-C, the wait for the pty's exit) is a timer of this clock, and
   * durations are measured on it. The system clock in production; a test
   * with a manual clock advances it to make a deadline pass.
   */
  clock: Clock;
}

/** The sandbox port's result of a command (sandbox.ts), with what the shell measures besides. */
export interface ExecResult extends SandboxExecResult {
  durationMs: number;
  /** Characters dropped from the middle of an enormous output. */
  droppedChars: number;
  /** The shell's exported variables once the command ended (null when the shell did not say: it died, or its answer was too large). */
  env: Record<string, string> | null;
}

/** Bytes of the cwd an end marker reports at most (PATH_MAX); `pwd` may print more, and is cut one byte past it. */
const CWD_REPORT_MAX = 4096;
/**
 * Characters an end marker has at most: its words, the cwd and the
 * variables, each cut one byte past its maximum and base64-encoded. Text
 * that began like this command's end marker and is longer is not one: it is
 * output (a program that read the marker's token from its shell and prints
 * it without end would otherwise be held in memory whole).
 */
const END_MARKER_MAX = 200 + Math.ceil((CWD_REPORT_MAX + 1) / 3) * 4 + Math.ceil((ENV_REPORT_MAX + 1) / 3) * 4;
/**
 * Characters of terminal output held while no command reads it (a program
 * the agent left running may print between commands, for as long as it
 * likes): past twice END_MARKER_MAX, only the last END_MARKER_MAX are kept.
 * A reading command holds less than this (see absorb), so it never loses a
 * character to the cut.
 */
const IDLE_BUF_MAX = 2 * END_MARKER_MAX;

/** After Ctrl-C, how long the shell has to print its marker before everything is killed. */
export const KILL_GRACE_MS = 400;
const READY_TIMEOUT_MS = 10_000;
/** Output kept in memory per command; the middle of anything larger is dropped. */
const KEEP_HEAD = 4_000_000;
const KEEP_TAIL = 4_000_000;

// eslint-disable-next-line no-control-regex
const ANSI = /\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]/g;

export function cleanOutput(s: string): string {
  return s.replace(ANSI, '').replace(/\r+\n/g, '\n').replace(/\r/g, '\n');
}

export class PtyShell {
  private proc: Pty.IPty;
  private buf = '';
  private exited = false;
  /** The shell's own exit code, once it exited by itself. */
  private exitCode: number | null = null;
  private readonly nonce = randomBytes(6).toString('hex');
  private seq = 0;
  private queue: Promise<unknown> = Promise.resolve();
  private onData: (() => void) | null = null;
  private onExit: (() => void) | null = null;
  cwd: string;

  private constructor(
    readonly config: ShellConfig,
    proc: Pty.IPty,
  ) {
    this.proc = proc;
    this.cwd = config.cwd;
    proc.onData((d) => {
      this.buf += d;
      if (this.buf.length > IDLE_BUF_MAX) this.buf = this.buf.slice(-END_MARKER_MAX);
      this.onData?.();
    });
    proc.onExit((e) => {
      this.exited = true;
      this.exitCode = e.exitCode;
      // The shell is gone; whatever it left running in its session goes too.
      killSession(proc.pid);
      this.onExit?.();
      this.onData?.();
    });
  }

  get alive(): boolean {
    return !this.exited;
  }

  get pid(): number {
    return this.proc.pid;
  }

  /** Characters of terminal output held that no command has taken yet (bounded: see IDLE_BUF_MAX). */
  get pendingChars(): number {
    return this.buf.length;
  }

  static async start(config: ShellConfig): Promise<PtyShell> {
    const argv = isolatedCommand(config.isolation, {
      network: config.network,
      egress: config.egress ?? null,
      mounts: config.mounts,
      // Under bwrap the sandbox starts in /workspace, always: the recorded cwd comes from the agent's
      // shell (untrusted), and init's `cd <cwd> || cd` moves there inside the sandbox, or stays home.
      cwd: config.isolation === 'bwrap' ? '/workspace' : config.cwd,
      argv: ['/bin/bash', '--noprofile', '--norc', '--noediting'],
    });
    const [file, ...args] = argv as [string, ...string[]];
    // HISTSIZE=0 from the first line: the protocol's own lines never enter a history a command could print.
    const pty = await loadPty();
    const proc = pty.spawn(file, args, { name: 'dumb', cols: 200, rows: 50, cwd: config.hostCwd, env: { ...config.env, HISTSIZE: '0' } });
    const shell = new PtyShell(config, proc);
    await shell.init();
    return shell;
  }

  private async init(): Promise<void> {
    // Line by line: the cwd and the variables (base64, see assignLines) would not fit in one terminal line.
    this.write(
      `stty -echo -onlcr 2>/dev/null; set +m; set +o history; PS1=''; PS2=''; PROMPT_COMMAND=''; unset HISTFILE\n` +
        `${assignLines('__ob_d', this.config.cwd)}cd -- "$__ob_d" 2>/dev/null || cd\n` +
        `${exportScript(this.config.exports ?? {})}unset __ob_v __ob_d; printf '__OB_%s_%s__\\n' READY ${this.nonce}\n`,
    );
    const marker = `__OB_READY_${this.nonce}__\n`;
    const ok = await this.waitFor(() => this.buf.includes(marker), READY_TIMEOUT_MS);
    if (!ok) {
      const seen = cutTail(cleanOutput(this.buf).trim(), 500);
      this.kill();
      throw new Error(`the sandboxed shell did not start (${this.config.isolation})${seen ? `: ${seen}` : ''}`);
    }
    this.buf = this.buf.slice(this.buf.indexOf(marker) + marker.length);
  }

  private write(s: string) {
    if (!this.exited) this.proc.write(s);
  }

  /** Resolves true when `cond` holds, false after `ms` or when the shell exits. */
  private waitFor(cond: () => boolean, ms: number): Promise<boolean> {
    return new Promise((resolve) => {
      if (cond()) return resolve(true);
      let cancel = () => {};
      const done = (v: boolean) => {
        cancel();
        this.onData = null;
        resolve(v);
      };
      cancel = this.config.clock.setTimer(ms, () => done(cond()));
      this.onData = () => {
        if (cond()) done(true);
        else if (this.exited) done(false);
      };
    });
  }

  /** Runs one command; commands queue behind each other. */
  exec(command: string, opts: { timeoutMs: number; signal?: AbortSignal }): Promise<ExecResult> {
    const run = this.queue.then(() => this.execNow(command, opts));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async execNow(command: string, opts: { timeoutMs: number; signal?: AbortSignal }): Promise<ExecResult> {
    const clock = this.config.clock;
    const started = clock.now();
    // A fresh token per command: output cannot know it in advance (history is off, too).
    const n = `${++this.seq}${randomBytes(6).toString('hex')}`;
    const startMark = `__OB_S_${this.nonce}_${n}__\n`;
    const endPrefix = `\n__OB_E_${this.nonce}_${n}_`;
    const endRe = new RegExp(`\\n__OB_E_${this.nonce}_${n}_(\\d+)_([A-Za-z0-9+/=]*)_([A-Za-z0-9+/=]*)__\\n`);
    const result = (over: Partial<ExecResult>): ExecResult => ({
      output: '',
      exitCode: null,
      timedOut: false,
      interrupted: false,
      shellDied: false,
      cwd: this.cwd,
      durationMs: clock.now() - started,
      droppedChars: 0,
      env: null,
      ...over,
    });
    if (this.exited) return result({ shellDied: true, output: '(the shell is not running)' });

    const b64 = Buffer.from(command, 'utf8').toString('base64');
    let script = `__ob_c=''\n`;
    for (let i = 0; i < b64.length; i += CHUNK) script += `__ob_c+='${b64.slice(i, i + CHUNK)}'\n`;
    script += `printf '__OB_S_%s_%s__\\n' ${this.nonce} ${n}; eval "$(printf %s "$__ob_c" | base64 -d)" </dev/null; __ob=$?; unset __ob_c; ${this.endMarkerCmd(n, '$__ob')}\n`;

    // Output handling: drop everything before our start marker; cap memory.
    let head = '';
    let tail = '';
    let dropped = 0;
    let started2 = false;
    let ended: RegExpExecArray | null = null;
    const absorb = () => {
      if (!started2) {
        const i = this.buf.indexOf(startMark);
        if (i === -1) return;
        this.buf = this.buf.slice(i + startMark.length);
        started2 = true;
      }
      const m = endRe.exec(this.buf);
      // Keep a margin where a marker may be forming (all of one that has begun, up to END_MARKER_MAX: it carries the environment), unless the shell is gone.
      const at = this.buf.lastIndexOf(endPrefix);
      const forming = at !== -1 && this.buf.length - at <= END_MARKER_MAX ? at : Infinity;
      const upto = m ? m.index : this.exited ? this.buf.length : Math.min(forming, Math.max(0, this.buf.length - 200));
      const piece = this.buf.slice(0, upto);
      this.buf = this.buf.slice(upto);
      if (piece) {
        // This seam may split a surrogate pair; it is harmless: head and tail are joined again
        // as they are, or re-cut below when the middle is first dropped. From then on the head is
        // final (it may be a unit short of KEEP_HEAD, to keep a pair whole).
        if (dropped === 0 && head.length < KEEP_HEAD) {
          const take = piece.slice(0, KEEP_HEAD - head.length);
          head += take;
          tail += piece.slice(take.length);
        } else tail += piece;
        if (tail.length > KEEP_TAIL * 2) {
          const red = this.config.redact ?? ((x: string) => x);
          if (dropped === 0) {
            // First drop: redact across the head/tail seam before it becomes a gap.
            // Both cuts around the gap keep surrogate pairs whole: half a pair would reach the model.
            const joined = red(head + tail);
            head = cutHead(joined, KEEP_HEAD);
            tail = joined.slice(head.length);
          } else tail = red(tail);
          const kept = cutTail(tail, KEEP_TAIL);
          dropped += tail.length - kept.length;
          tail = kept;
        }
      }
      if (m) {
        ended = m;
        this.buf = this.buf.slice(m[0].length);
      }
    };
    const output = () => {
      let out = head + (dropped ? `\n[... ${dropped} characters dropped ...]\n` : '') + tail;
      return cleanOutput(out);
    };

    this.write(script);
    const isDone = () => {
      absorb();
      return ended !== null;
    };
    let timedOut = false;
    let interrupted = false;
    const first = await new Promise<'done' | 'timeout' | 'abort'>((resolve) => {
      let cancel = () => {};
      const finish = (v: 'done' | 'timeout' | 'abort') => {
        cancel();
        opts.signal?.removeEventListener('abort', onAbort);
        this.onData = null;
        resolve(v);
      };
      cancel = clock.setTimer(opts.timeoutMs, () => finish('timeout'));
      const onAbort = () => finish('abort');
      opts.signal?.addEventListener('abort', onAbort, { once: true });
      if (opts.signal?.aborted) return finish('abort');
      this.onData = () => {
        if (isDone() || this.exited) finish('done');
      };
      this.onData();
    });
    if (first !== 'done') {
      timedOut = first === 'timeout';
      interrupted = first === 'abort';
      // Ctrl-C to the foreground job, then ask for the marker again.
      this.write('\x03');
      this.write(`${this.endMarkerCmd(n, '130')}\n`);
      const ok = await this.waitFor(isDone, KILL_GRACE_MS);
      if (!ok) this.kill();
    }
    absorb();
    const m = ended as RegExpExecArray | null;
    if (m) {
      const cwd = Buffer.from(m[2] ?? '', 'base64').toString('utf8').trim();
      if (cwd && Buffer.byteLength(cwd) <= CWD_REPORT_MAX) this.cwd = cwd; // a longer one was cut: not a place to start in
      let out = output();
      if (out.endsWith('\n')) out = out.slice(0, -1); // the newline before the end marker is ours
      return result({ output: out, exitCode: timedOut || interrupted ? null : Number(m[1]), timedOut, interrupted, droppedChars: dropped, env: parseEnv(m[3] ?? '') });
    }
    const code = timedOut || interrupted ? null : this.exitCode;
    // An interactive bash says "exit" as it leaves; that is not the command's output.
    const out = output().replace(/\n?exit\n*$/, '').replace(/\n$/, '');
    return result({ output: out, exitCode: code, timedOut, interrupted, shellDied: true, droppedChars: dropped });
  }

  private endMarkerCmd(n: string, code: string): string {
    // The exported variables come with the cwd (env -0, encoded): ShellSession keeps them for the next shell.
    return `printf '\\n__OB_E_%s_%s_%s_%s_%s__\\n' ${this.nonce} ${n} "${code}" "$(pwd | head -c ${CWD_REPORT_MAX + 1} | base64 -w0)" "$(command env -0 | head -c ${ENV_REPORT_MAX + 1} | base64 -w0)"`;
  }

  /** Kills every process of this shell's sandbox. Idempotent. */
  kill(): void {
    if (this.exited) return;
    const pid = this.proc.pid;
    killSession(pid);
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // already gone
    }
    try {
      this.proc.kill('SIGKILL');
    } catch {
      // already gone
    }
    this.exited = true;
  }

  /** Waits (a little) for the pty to report its exit after kill(). */
  async closed(ms = 1000): Promise<void> {
    if (this.exited && !this.onExit) return;
    await new Promise<void>((resolve) => {
      const cancel = this.config.clock.setTimer(ms, resolve);
      this.onExit = () => {
        cancel();
        resolve();
      };
    });
  }
}
