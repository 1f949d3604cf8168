/**
 * Whether an agent's MCP servers start, for `openboa agents`: each is
 * started as a run would start it (same environment, secrets, network
 * policy), asked for its tools, and killed. Every probe is bounded by
 * PROBE_SECONDS (or the server's start_timeout_seconds, if shorter), and
 * all of them run at once, so the command takes at most about that long.
 * What a probe reports is redacted with the secrets it resolved.
 */
import { isStdioServer, type McpServer } from '../schema/index.js';
import { Redactor } from '../foundation/redact.js';
import { isLoopbackUrl, McpConnection } from './mcp-connection.js';
import { resolveMcpServers } from './mcp-hub.js';

/** Bound of one probe, seconds. */
export const PROBE_SECONDS = 5;

export interface ProbeResult {
  name: string;
  transport: 'stdio' | 'http';
  permission: McpServer['permission'];
  started: boolean;
  /** Tools it listed (before the run's bounds). */
  tools: number;
  error: string | null;
  /** A risk worth saying even when it starts (loopbackWarning). */
  warning: string | null;
}

/**
 * Under network: host the agent's shell can reach a loopback HTTP server
 * itself, past always_ask; only a secret header the server checks keeps
 * it out (docs/mcp.md, "Security posture").
 */
export function loopbackWarning(def: McpServer, network: 'none' | 'host'): string | null {
  if (isStdioServer(def) || network !== 'host' || !isLoopbackUrl(def.url)) return null;
  if (Object.values(def.headers).some((v) => typeof v !== 'string')) return null;
  return `the agent's shell can reach this loopback server directly under network: host, past always_ask; give it a secret header (headers: {Authorization: {secret: {env: NAME}}}) that it checks`;
}

export async function probeMcpServers(defs: readonly McpServer[], o: { daemonEnv: NodeJS.ProcessEnv; cwd: string; network: 'none' | 'host'; signal?: AbortSignal }): Promise<ProbeResult[]> {
  const bounded = defs.map((d) => ({ ...d, start_timeout_seconds: Math.min(d.start_timeout_seconds, PROBE_SECONDS) }));
  const resolved = resolveMcpServers(bounded, o.daemonEnv);
  const redactor = new Redactor(resolved.secrets);
  const signal = o.signal ?? new AbortController().signal;
  return Promise.all(
    resolved.servers.map(async (s): Promise<ProbeResult> => {
      const base = { name: s.def.name, transport: isStdioServer(s.def) ? ('stdio' as const) : ('http' as const), permission: s.def.permission, warning: loopbackWarning(s.def, o.network) };
      const problem = resolved.problems.get(s.def.name);
      if (problem) return { ...base, started: false, tools: 0, error: problem };
      const conn = new McpConnection(s, { daemonEnv: o.daemonEnv, cwd: o.cwd, network: o.network });
      try {
        const res = await conn.start(signal);
        if ('error' in res) return { ...base, started: false, tools: 0, error: redactor.text(res.error) };
        return { ...base, started: true, tools: res.tools.length, error: null };
      } finally {
        conn.kill();
      }
    }),
  );
}
