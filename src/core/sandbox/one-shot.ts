/**
 * One command in a sandbox of its own: `bash -c <command>` under the run's
 * isolation (bubblewrap, unshare-net or none), started at the sandbox's
 * home, with stdout and stderr piped, ended when the command ends. An
 * outcome's check runs here (Sandbox.execFresh).
 *
 * Its verdict is the exit status the kernel reports for the process the
 * daemon spawned, never a marker printed by a shell: the persistent shell
 * (pty-shell.ts) frames each command with markers kept in its own memory,
 * which a program it runs could read (/proc/<ppid>/mem, where ptrace is
 * not restricted) and forge on the terminal. Here there is no terminal and
 * no marker to forge.
 *
 * A timeout or an abort kills everything the command started: the process
 * group, and every process of its session (bwrap's --die-with-parent and
 * its PID namespace end the rest). The command line is the one reap.ts
 * recognises, so a sandbox a killed daemon left behind is reaped at the
 * next start.
 */
import { spawn } from 'node:child_process';
import type { Clock } from '../foundation/clock.js';
import { cutHead, cutTail } from '../foundation/text-cut.js';
import { isolatedCommand, type Isolation, type MountSpec } from './isolation.js';
import type { NetworkPosture } from '../schema/index.js';
import { killSession } from './kill-session.js';

export interface OneShotConfig {
  isolation: Isolation;
  network: NetworkPosture;
  /** network limited: the host path of the run's egress proxy socket (./egress-bridge.ts). */
  egress?: string | null;
  mounts: MountSpec[];
  /** The complete environment of the command. */
  env: Record<string, string>;
  /** Where it starts: a sandbox path under bwrap, a host path otherwise. */
  cwd: string;
  /** Host directory the spawned process starts in. */
  hostCwd: string;
  clock: Clock;
}

export interface OneShotResult {
  /** stdout and stderr as they came; the middle dropped past KEEP characters at each end. */
  output: string;
  /** null when it did not exit by itself (killed, or ended by a signal). */
  exitCode: number | null;
  timedOut: boolean;
  interrupted: boolean;
  durationMs: number;
}

/** Characters of output kept at each end. */
const KEEP = 256 * 1024;

export function runOnce(c: OneShotConfig, command: string, o: { timeoutMs: number; signal: AbortSignal }): Promise<OneShotResult> {
  const started = c.clock.now();
  const argv = isolatedCommand(c.isolation, { network: c.network, egress: c.egress ?? null, mounts: c.mounts, cwd: c.cwd, argv: ['/bin/bash', '--noprofile', '--norc', '--noediting', '-c', command] });
  const [file, ...args] = argv as [string, ...string[]];
  return new Promise((resolve) => {
    let head = '';
    let tail = '';
    let dropped = 0;
    const take = (chunk: Buffer) => {
      const t = chunk.toString('utf8');
      if (head.length < KEEP) {
        const room = KEEP - head.length;
        head += t.slice(0, room);
        tail += t.slice(room);
      } else tail += t;
      if (tail.length > 2 * KEEP) {
        dropped += tail.length - KEEP;
        tail = cutTail(tail, KEEP);
      }
    };
    let timedOut = false;
    let interrupted = false;
    let settled = false;
    const child = spawn(file, args, { cwd: c.hostCwd, env: c.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const kill = () => {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // gone already
      }
      killSession(child.pid);
    };
    const cancelTimer = c.clock.setTimer(o.timeoutMs, () => {
      timedOut = true;
      kill();
    });
    const onAbort = () => {
      interrupted = true;
      kill();
    };
    o.signal.addEventListener('abort', onAbort, { once: true });
    if (o.signal.aborted) onAbort();
    child.stdout.on('data', take);
    child.stderr.on('data', take);
    const finish = (exitCode: number | null, extra = '') => {
      if (settled) return;
      settled = true;
      cancelTimer();
      o.signal.removeEventListener('abort', onAbort);
      // Whatever it started in its session goes with it.
      if (child.pid !== undefined) killSession(child.pid);
      const output = dropped ? `${head}\n[… ${dropped} characters left out …]\n${tail}` : head + tail;
      resolve({ output: `${output}${extra}`, exitCode: timedOut || interrupted ? null : exitCode, timedOut, interrupted, durationMs: c.clock.now() - started });
    };
    child.on('error', (e) => finish(null, `${cutHead(e.message, 500)}`));
    child.on('close', (code) => finish(code));
  });
}
