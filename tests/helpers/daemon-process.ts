/**
 * `openboa daemon --json` as a real child process, for fault tests (kill -9,
 * two daemons). Waits are driven by the daemon's own JSON lines.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { TestContext } from 'node:test';
import { CLI } from './cli.js';
import { beforeHomeRemoved } from './home.js';

export interface DaemonProcess {
  child: ChildProcess;
  lines: Array<Record<string, unknown>>;
  /** Resolves with the first line (past or future) matching `pred`; fails after `ms`. */
  line(pred: (l: Record<string, unknown>) => boolean, ms?: number): Promise<Record<string, unknown>>;
  kill9(): Promise<void>;
  /** SIGTERM and wait for the exit code. */
  term(): Promise<number | null>;
  /** Resolves with the exit code when the process ends by itself or is stopped. */
  exited: Promise<number | null>;
  /** What it wrote to stderr so far. */
  stderr(): string;
}

export function spawnDaemon(t: TestContext, home: string, env: NodeJS.ProcessEnv, args: string[] = []): DaemonProcess {
  const child = spawn(process.execPath, [CLI, '--home', home, 'daemon', '--json', ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: Array<Record<string, unknown>> = [];
  const waiters: Array<() => void> = [];
  let buf = '';
  let stderr = '';
  child.stdout!.on('data', (d) => {
    buf += d;
    let i;
    while ((i = buf.indexOf('\n')) !== -1) {
      const l = buf.slice(0, i);
      buf = buf.slice(i + 1);
      try {
        lines.push(JSON.parse(l));
      } catch {
        lines.push({ kind: 'text', text: l });
      }
      for (const w of [...waiters]) w();
    }
  });
  child.stderr!.on('data', (d) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  // Killed, and gone, before the test's temp home is removed: a daemon still running then
  // (its search feed, its memory scan) would write into the folder being deleted.
  beforeHomeRemoved(t, async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  });
  // A home not made by tempHome(t) has no such step: the end of the test stops it then.
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  return {
    child,
    lines,
    exited,
    stderr: () => stderr,
    line(pred, ms = 20_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const hit = lines.find(pred);
          if (hit) {
            clearTimeout(timer);
            waiters.splice(waiters.indexOf(check), 1);
            resolve(hit);
            return true;
          }
          return false;
        };
        const timer = setTimeout(() => {
          waiters.splice(waiters.indexOf(check), 1);
          reject(new Error(`no matching daemon line within ${ms} ms; lines: ${JSON.stringify(lines).slice(0, 1500)}; stderr: ${stderr.slice(0, 500)}`));
        }, ms);
        waiters.push(check);
        check();
      });
    },
    async kill9() {
      child.kill('SIGKILL');
      await exited;
    },
    async term() {
      child.kill('SIGTERM');
      return exited;
    },
  };
}
