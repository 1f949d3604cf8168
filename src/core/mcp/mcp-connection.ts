/**
 * One MCP server as a run uses it, through the official SDK client: start
 * (spawn or connect, initialize, list its tools, all within the server's
 * start timeout), call a tool (within its call timeout, cut short by the
 * run's signal), and kill. A stdio server runs outside the agent's sandbox,
 * as the daemon's user, with a minimal environment: MINIMAL_ENV_NAMES from
 * the daemon's environment plus the server's own `env`. An HTTP server's
 * URL is refused when the environment's network policy does not allow it.
 *
 * Contract: nothing here throws at the run for what a server does; start()
 * and call() resolve to data (an error string, an error result).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, McpError, type CallToolResult, type Tool as McpToolInfo } from '@modelcontextprotocol/sdk/types.js';
import { isStdioServer, type McpServer } from '../schema/index.js';
import { StdioGroupTransport } from './stdio-group-transport.js';
import { boundedFetch } from './bounded-fetch.js';
import { cutHead } from '../foundation/text-cut.js';

/** What a stdio server inherits from the daemon's environment (besides its own `env`): enough to find and run a program. */
export const MINIMAL_ENV_NAMES = ['PATH', 'HOME', 'USER', 'LOGNAME', 'LANG', 'LC_ALL', 'TZ', 'TMPDIR'] as const;

/** Pages of tools/list read at most (a server that pages forever is cut off). */
const MAX_LIST_PAGES = 20;
/** Tools kept from one listing before the catalog's own caps: a bound on what is held in memory. */
export const MAX_LISTED_TOOLS = 1000;

export interface ResolvedServer {
  def: McpServer;
  /** The server's environment (stdio) or headers (HTTP), secret references resolved. */
  values: Record<string, string>;
}

export type CallOutcome = { ok: true; result: CallToolResult } | { ok: false; error: string; kind: 'timeout' | 'gone' | 'failed' | 'aborted' };

/** The environment a stdio server gets: the minimal names from the daemon's environment, then its own. */
export function serverEnvironment(daemonEnv: NodeJS.ProcessEnv, own: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const n of MINIMAL_ENV_NAMES) {
    const v = daemonEnv[n];
    if (v !== undefined && !v.startsWith('()')) env[n] = v;
  }
  return { ...env, ...own };
}

/** Loopback by its literal host: what `network: none` still allows (a server on this machine, like a stdio one). */
export function isLoopbackUrl(url: string): boolean {
  let host: string;
  try {
    host = new URL(url).hostname.toLowerCase();
  } catch {
    return false;
  }
  if (host === 'localhost' || host === '[::1]') return true;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/** Why this server's URL may not be reached under this network policy; null when it may. */
export function networkRefusal(def: McpServer, network: 'none' | 'host'): string | null {
  if (isStdioServer(def) || network === 'host' || isLoopbackUrl(def.url)) return null;
  return `the environment's network is "none", which allows only loopback MCP URLs (localhost, 127.0.0.0/8, [::1]); set network: host (or limited, with allow_mcp_servers: true) to reach ${new URL(def.url).host}`;
}

function describeError(e: unknown): string {
  if (e instanceof McpError && e.code === ErrorCode.RequestTimeout) return 'timed out';
  const err = e as Error & { code?: unknown };
  const msg = err?.message ? err.message : String(e);
  return cutHead(msg, 500);
}

export class McpConnection {
  private client: Client | null = null;
  private stdio: StdioGroupTransport | null = null;
  private goneWhy: string | null = null;
  private killed = false;

  constructor(
    readonly server: ResolvedServer,
    private readonly o: { daemonEnv: NodeJS.ProcessEnv; cwd: string; network: 'none' | 'host' },
  ) {}

  get name(): string {
    return this.server.def.name;
  }

  /** Why the server cannot take calls now (it exited, or was killed); null while it runs. */
  get gone(): string | null {
    return this.goneWhy;
  }

  /** The server's process id (stdio), for tests and diagnostics. */
  get pid(): number | null {
    return this.stdio?.pid ?? null;
  }

  /**
   * Starts the server and lists its tools, within its start timeout and
   * the signal. Returns the tools, or why it could not (the server is then
   * killed).
   */
  async start(signal: AbortSignal): Promise<{ tools: McpToolInfo[]; more: boolean } | { error: string }> {
    const def = this.server.def;
    const refused = networkRefusal(def, this.o.network);
    if (refused) return { error: refused };
    const timeoutMs = def.start_timeout_seconds * 1000;
    const limit = AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]);
    try {
      const client = new Client({ name: 'openboa', version: '1' }, { capabilities: {} });
      this.client = client;
      const transport = this.transport();
      client.onclose = () => {
        if (!this.goneWhy) this.goneWhy = this.exitNote();
      };
      await raceSignal(client.connect(transport, { signal: limit, timeout: timeoutMs }), limit);
      const tools: McpToolInfo[] = [];
      let cursor: string | undefined;
      let more = false;
      for (let page = 0; page < MAX_LIST_PAGES && tools.length < MAX_LISTED_TOOLS; page++) {
        const res = await client.listTools(cursor ? { cursor } : undefined, { signal: limit, timeout: timeoutMs });
        more = more || res.tools.length > MAX_LISTED_TOOLS - tools.length;
        tools.push(...res.tools.slice(0, MAX_LISTED_TOOLS - tools.length));
        cursor = res.nextCursor;
        if (!cursor) break;
      }
      return { tools, more: more || cursor !== undefined };
    } catch (e) {
      const why = signal.aborted ? 'the run was stopped while it started' : limit.aborted ? `it did not start within ${def.start_timeout_seconds} s` : describeError(e);
      const note = this.stdio ? this.exitNote(true) : '';
      this.kill();
      return { error: `${why}${note ? `; ${note}` : ''}` };
    }
  }

  /** Calls one tool; every failure is data. A timeout leaves the server running; the run's abort kills it (see kill). */
  async call(tool: string, input: Record<string, unknown>, signal: AbortSignal): Promise<CallOutcome> {
    if (this.goneWhy || !this.client) return { ok: false, kind: 'gone', error: `the MCP server ${this.name} is not running: ${this.goneWhy ?? 'it did not start'}` };
    const seconds = this.server.def.timeout_seconds;
    try {
      const result = (await this.client.callTool({ name: tool, arguments: input }, undefined, { signal, timeout: seconds * 1000, maxTotalTimeout: seconds * 1000 })) as CallToolResult;
      return { ok: true, result };
    } catch (e) {
      if (signal.aborted) return { ok: false, kind: 'aborted', error: `the call was stopped: ${describeError(signal.reason ?? e)}` };
      if (e instanceof McpError && e.code === ErrorCode.RequestTimeout) return { ok: false, kind: 'timeout', error: `the MCP server ${this.name} did not answer within ${seconds} s (timeout_seconds); the call was abandoned` };
      if (this.goneWhy) return { ok: false, kind: 'gone', error: `the MCP server ${this.name} stopped during the call: ${this.goneWhy}` };
      return { ok: false, kind: 'failed', error: `the MCP server ${this.name} failed the call: ${describeError(e)}` };
    }
  }

  /** Ends the server at once (SIGKILL to a stdio server's group; an HTTP session is dropped). Synchronous; safe to repeat. */
  kill(): void {
    if (!this.goneWhy) this.goneWhy = 'it was stopped';
    if (this.killed) return;
    this.killed = true;
    this.stdio?.kill();
    this.client?.close().catch(() => undefined);
  }

  private transport(): Transport {
    const def = this.server.def;
    if (isStdioServer(def)) {
      this.stdio = new StdioGroupTransport({ command: def.command, args: def.args, env: serverEnvironment(this.o.daemonEnv, this.server.values), cwd: this.o.cwd });
      return this.stdio;
    }
    // A server past the byte bounds is cut off and gone for the rest of the run (bounded-fetch.ts).
    const fetch = boundedFetch({
      onExceeded: (why) => {
        this.goneWhy ??= `it was cut off: ${why}`;
        this.kill();
      },
    });
    return new StreamableHTTPClientTransport(new URL(def.url), { requestInit: { headers: this.server.values }, fetch });
  }

  /** How a stdio server ended and the tail of its stderr, for an error message. */
  private exitNote(startFailed = false): string {
    const s = this.stdio;
    if (!s) return 'the connection closed';
    const how = s.exit ? (s.exit.signal ? `it was killed by ${s.exit.signal}` : `it exited with code ${s.exit.code}`) : startFailed ? '' : 'the connection closed';
    const err = s.stderr ? `stderr: ${cutHead(s.stderr, 1000)}` : '';
    return [how, err].filter(Boolean).join('; ');
  }
}

/** Rejects when the signal aborts first (connect() does not take a signal for the transport's start). */
function raceSignal<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => (signal.removeEventListener('abort', onAbort), resolve(v)),
      (e) => (signal.removeEventListener('abort', onAbort), reject(e)),
    );
  });
}
