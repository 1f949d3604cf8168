/**
 * The MCP stdio transport for servers the runtime starts: the SDK's own
 * (client/stdio.js) spawns the server in the daemon's process group and, on
 * close, waits up to four seconds before a SIGTERM to the direct child only.
 * This one starts the server as the leader of a session and process group
 * of its own (detached), so kill() takes everything it started with it,
 * and it dies with the daemon where `setpriv --pdeathsig` works. Framing is
 * the SDK's (ReadBuffer, serializeMessage).
 *
 * Contract: start() resolves once the process is spawned and rejects when
 * it cannot be; onclose fires once, when the process is gone; kill() is
 * synchronous and idempotent.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { probeCapabilities } from '../sandbox/isolation.js';
import { killSession } from '../sandbox/kill-session.js';
import { cutTail } from '../foundation/text-cut.js';

/** What of a server's stderr is kept for an error message (its tail). */
const STDERR_KEEP = 2000;
/** A server's single message may be this large; a bigger one closes it (a flood cannot fill the daemon's memory). */
const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

export interface StdioServerSpawn {
  command: string;
  args: readonly string[];
  /** The server's whole environment. */
  env: Record<string, string>;
  cwd: string;
}

export class StdioGroupTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private child: ChildProcess | null = null;
  private readonly buffer = new ReadBuffer({ maxBufferSize: MAX_MESSAGE_BYTES });
  private stderrTail = '';
  private exited = false;
  private closed = false;
  /** How the process ended, once it did (for an error message). */
  exit: { code: number | null; signal: NodeJS.Signals | null } | null = null;

  constructor(private readonly p: StdioServerSpawn) {}

  get pid(): number | null {
    return this.child?.pid ?? null;
  }

  /** The last lines the server wrote to stderr. */
  get stderr(): string {
    return this.stderrTail.trim();
  }

  start(): Promise<void> {
    if (this.child) throw new Error('already started');
    const dieWithDaemon = probeCapabilities().pdeathsig;
    const file = dieWithDaemon ? 'setpriv' : this.p.command;
    const args = dieWithDaemon ? ['--pdeathsig', 'KILL', '--', this.p.command, ...this.p.args] : [...this.p.args];
    return new Promise((resolve, reject) => {
      const child = spawn(file, args, { cwd: this.p.cwd, env: this.p.env, stdio: ['pipe', 'pipe', 'pipe'], detached: true, shell: false });
      this.child = child;
      let spawned = false;
      child.on('error', (e) => {
        if (!spawned) reject(e);
        else this.onerror?.(e);
      });
      child.on('spawn', () => {
        spawned = true;
        resolve();
      });
      child.on('close', (code, signal) => {
        this.exited = true;
        this.exit = { code, signal };
        this.kill(); // whatever it left behind in its group goes too
        this.finish();
      });
      child.stdin?.on('error', (e) => this.onerror?.(e));
      child.stdout?.on('data', (chunk: Buffer) => {
        try {
          this.buffer.append(chunk);
          for (;;) {
            const m = this.buffer.readMessage();
            if (m === null) break;
            this.onmessage?.(m);
          }
        } catch (e) {
          this.onerror?.(e as Error);
          this.kill();
        }
      });
      child.stderr?.on('data', (chunk: Buffer) => {
        this.stderrTail = cutTail(this.stderrTail + chunk.toString('utf8'), STDERR_KEEP);
      });
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve, reject) => {
      const stdin = this.child?.stdin;
      if (!stdin || this.exited || !stdin.writable) {
        reject(new Error('the server process is not running'));
        return;
      }
      if (stdin.write(serializeMessage(message))) resolve();
      else stdin.once('drain', resolve);
    });
  }

  /** Ends the server: SIGKILL to its process group and session, at once (it has nothing of ours to save). */
  async close(): Promise<void> {
    this.kill();
    this.finish();
  }

  /** SIGKILL to everything the server started (its group and session); synchronous, safe to repeat. */
  kill(): void {
    const pid = this.child?.pid;
    if (pid === undefined) return;
    try {
      this.child?.stdin?.destroy();
    } catch {
      // closed already
    }
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // the group is gone
    }
    killSession(pid);
  }

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    this.buffer.clear();
    this.onclose?.();
  }
}
