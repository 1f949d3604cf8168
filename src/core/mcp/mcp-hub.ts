/**
 * The MCP servers of one run (docs/mcp.md). Started once per run, when the
 * run opens, all at once; killed when the run ends (dispose) and at once
 * when it is cut short (interrupt, shutdown, deadline: the run's signal).
 * No server outlives its run, so no state is shared between sessions.
 *
 * Their tools become catalog entries named `mcp__<server>__<tool>`, sorted
 * by that name (a server listing its tools in another order does not break
 * the prompt cache), within bounds: MAX_TOOLS_PER_SERVER and MAX_MCP_TOOLS
 * tools, MAX_SCHEMA_CHARS per input schema, MAX_SERVER_CHARS of definitions
 * per server; what is left out is listed with why (runtime/tools.json).
 */
import type { Tool as McpToolInfo } from '@modelcontextprotocol/sdk/types.js';
import { MODEL_TOOL_NAME, isStdioServer, mcpToolName, type McpServer } from '../schema/index.js';
import { cutHead } from '../foundation/text-cut.js';
// Types only: the connection and the MCP SDK behind it are loaded by start(), so a run without MCP servers (and the
// daemon's start) does not load them.
import type { CallOutcome, McpConnection, ResolvedServer } from './mcp-connection.js';
import { resultText } from './mcp-content.js';

/** Tools offered from one server, and from all of a run's servers. */
export const MAX_TOOLS_PER_SERVER = 100;
export const MAX_MCP_TOOLS = 200;
/** One tool's input schema as JSON, characters: a bigger one is left out (it would crowd the context). */
export const MAX_SCHEMA_CHARS = 16_000;
/** A tool's description is cut to this. */
export const MAX_DESCRIPTION_CHARS = 2_000;
/** All of one server's tool definitions (schemas and descriptions), characters. */
export const MAX_SERVER_CHARS = 100_000;
/** Left-out tools listed one by one per server (runtime/tools.json). */
export const MAX_LEFT_OUT_LISTED = 50;

export interface McpTool {
  /** As the model sees it: mcp__<server>__<tool>. */
  name: string;
  server: string;
  tool: string;
  description: string;
  input_schema: { type: 'object'; [k: string]: unknown };
  permission: 'always_allow' | 'always_ask';
}

export interface McpServerState {
  name: string;
  transport: 'stdio' | 'http';
  /** Why it offers no tools this run (did not start, a secret is missing); null when it started. */
  error: string | null;
  tools: string[];
  left_out: Array<{ tool: string; why: string }>;
}

export interface McpHubOptions {
  daemonEnv: NodeJS.ProcessEnv;
  /** Where stdio servers start: the agent's directory, so relative paths in `args` are next to agent.yaml. */
  cwd: string;
  network: 'none' | 'host';
  /** The run's redaction: a server's tool definitions reach the model, so its secrets are taken out of them too. */
  redact?: (text: string) => string;
}

/**
 * Secret references of the servers' `env` and `headers`, resolved from the
 * daemon's environment. A server with a secret that is not set does not
 * start. `secrets` (by variable name) feed the run's Redactor.
 */
export function resolveMcpServers(defs: readonly McpServer[], daemonEnv: NodeJS.ProcessEnv): { servers: ResolvedServer[]; secrets: Record<string, string>; problems: Map<string, string> } {
  const servers: ResolvedServer[] = [];
  const secrets: Record<string, string> = {};
  const problems = new Map<string, string>();
  for (const def of defs) {
    const values: Record<string, string> = {};
    const missing: string[] = [];
    for (const [k, v] of Object.entries(isStdioServer(def) ? def.env : def.headers)) {
      if (typeof v === 'string') values[k] = v;
      else {
        const s = daemonEnv[v.secret.env];
        if (s === undefined || s === '') missing.push(v.secret.env);
        else (values[k] = s), (secrets[v.secret.env] = s);
      }
    }
    if (missing.length) problems.set(def.name, `the secret(s) ${missing.join(', ')} are not set in the daemon's environment`);
    servers.push({ def, values });
  }
  return { servers, secrets, problems };
}

export class McpHub {
  private readonly conns = new Map<string, McpConnection>();
  private readonly states = new Map<string, McpServerState>();
  private offeredTools: McpTool[] = [];
  private readonly reportedGone = new Set<string>();

  constructor(
    private readonly resolved: ReturnType<typeof resolveMcpServers>,
    private readonly o: McpHubOptions,
  ) {
    for (const s of resolved.servers) {
      this.states.set(s.def.name, { name: s.def.name, transport: isStdioServer(s.def) ? 'stdio' : 'http', error: null, tools: [], left_out: [] });
    }
  }

  /** No servers configured. */
  get empty(): boolean {
    return this.resolved.servers.length === 0;
  }

  /** The tools offered this run, sorted by name ([] before start()). */
  get tools(): readonly McpTool[] {
    return this.offeredTools;
  }

  get servers(): McpServerState[] {
    return [...this.states.values()];
  }

  serverState(name: string): McpServerState | undefined {
    return this.states.get(name);
  }

  /**
   * The server and tool a model-facing name calls, when it names a
   * configured server (the tool may not exist). Matched against the
   * configured server names, never split at a `__`: server names have no
   * `__` and no `_` at either end (schema/mcp.ts), so at most one server's
   * `mcp__<server>__` begins a name; should two, the name calls neither.
   */
  target(name: string): { server: string; tool: string } | null {
    const offered = this.offeredTools.find((t) => t.name === name);
    if (offered) return { server: offered.server, tool: offered.tool };
    const servers = [...this.states.keys()].filter((s) => name.startsWith(mcpToolName(s, '')));
    if (servers.length !== 1) return null;
    const server = servers[0]!;
    return { server, tool: name.slice(mcpToolName(server, '').length) };
  }

  /** The process id of a running stdio server (diagnostics, tests). */
  pid(server: string): number | null {
    return this.conns.get(server)?.pid ?? null;
  }

  /**
   * Starts every server (in parallel) and gathers their tools; the signal
   * cuts it short. Returns the servers that did not start, with why.
   */
  async start(signal: AbortSignal): Promise<Array<{ server: string; error: string }>> {
    const failed: Array<{ server: string; error: string }> = [];
    const { McpConnection, MAX_LISTED_TOOLS } = await import('./mcp-connection.js');
    if (signal.aborted) return failed; // cut short while loading: start nothing
    const listed = await Promise.all(
      this.resolved.servers.map(async (s) => {
        const problem = this.resolved.problems.get(s.def.name);
        if (problem) return { s, res: { error: problem } as const };
        const conn = new McpConnection(s, this.o);
        this.conns.set(s.def.name, conn);
        return { s, res: await conn.start(signal) };
      }),
    );
    const all: McpTool[] = [];
    for (const { s, res } of listed) {
      const state = this.states.get(s.def.name)!;
      if ('error' in res) {
        state.error = res.error;
        failed.push({ server: s.def.name, error: res.error });
        continue;
      }
      if (res.more) state.left_out.push({ tool: '*', why: `the server listed more than ${MAX_LISTED_TOOLS} tools (or pages); the rest were not read` });
      all.push(...this.admit(s.def, res.tools, state));
    }
    all.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    // A name two servers offer (the schema's name rules make this unreachable; kept as the last line of defence)
    // is offered by neither: a call of it must never reach the wrong server, nor under the wrong permission.
    const owners = new Map<string, string[]>();
    for (const t of all) owners.set(t.name, [...(owners.get(t.name) ?? []), t.server]);
    const unique = all.filter((t) => {
      const by = owners.get(t.name)!;
      if (by.length === 1) return true;
      this.states.get(t.server)!.left_out.push({ tool: t.tool, why: `its name ${t.name} is also offered by the MCP server(s) ${by.filter((x) => x !== t.server).join(', ') || t.server}; a name offered twice is left out` });
      return false;
    });
    all.splice(0, all.length, ...unique);
    for (const t of all.slice(MAX_MCP_TOOLS)) this.states.get(t.server)!.left_out.push({ tool: t.tool, why: `over ${MAX_MCP_TOOLS} MCP tools in all` });
    this.offeredTools = all.slice(0, MAX_MCP_TOOLS);
    for (const st of this.states.values()) {
      st.tools = this.offeredTools.filter((t) => t.server === st.name).map((t) => t.tool);
      // runtime/tools.json stays small too: the first MAX_LEFT_OUT_LISTED, then how many more.
      if (st.left_out.length > MAX_LEFT_OUT_LISTED) st.left_out = [...st.left_out.slice(0, MAX_LEFT_OUT_LISTED), { tool: '*', why: `and ${st.left_out.length - MAX_LEFT_OUT_LISTED} more left out` }];
    }
    return failed;
  }

  /** A server's listed tools as offered, within the bounds; the rest into state.left_out. */
  private admit(def: McpServer, listed: McpToolInfo[], state: McpServerState): McpTool[] {
    const out: McpTool[] = [];
    const seen = new Set<string>();
    let chars = 0;
    const sorted = [...listed].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const t of sorted) {
      const leave = (why: string) => state.left_out.push({ tool: cutHead(String(t.name), 200), why });
      const name = mcpToolName(def.name, t.name);
      if (!MODEL_TOOL_NAME.test(name)) {
        leave(`${JSON.stringify(cutHead(name, 80))} is not a tool name the model APIs accept (1-64 letters, digits, _ or -)`);
        continue;
      }
      if (seen.has(name)) {
        leave('listed twice');
        continue;
      }
      if (out.length >= MAX_TOOLS_PER_SERVER) {
        leave(`over ${MAX_TOOLS_PER_SERVER} tools from one server`);
        continue;
      }
      const schema = t.inputSchema && typeof t.inputSchema === 'object' ? { ...(t.inputSchema as Record<string, unknown>), type: 'object' as const } : { type: 'object' as const };
      const redact = this.o.redact ?? ((x: string) => x);
      const schemaJson = redact(JSON.stringify(schema));
      if (schemaJson.length > MAX_SCHEMA_CHARS) {
        leave(`its input schema is ${schemaJson.length} characters, over ${MAX_SCHEMA_CHARS}`);
        continue;
      }
      const description = cutHead(redact(typeof t.description === 'string' && t.description.trim() ? t.description : `${t.name} (from the MCP server ${def.name})`), MAX_DESCRIPTION_CHARS);
      let inputSchema: McpTool['input_schema'];
      try {
        inputSchema = JSON.parse(schemaJson) as McpTool['input_schema'];
      } catch {
        leave('its input schema is not JSON once its secrets are redacted');
        continue;
      }
      if (chars + schemaJson.length + description.length > MAX_SERVER_CHARS) {
        leave(`the server's tool definitions are over ${MAX_SERVER_CHARS} characters`);
        continue;
      }
      chars += schemaJson.length + description.length;
      seen.add(name);
      out.push({ name, server: def.name, tool: t.name, description, input_schema: inputSchema, permission: def.permission });
    }
    return out;
  }

  /**
   * Calls a server's tool. The result text is not yet redacted or bounded.
   * `report` is set (once per server) when the failure is the server's (it
   * is gone, or timed out): the run records it as a session.error.
   */
  async call(server: string, tool: string, input: Record<string, unknown>, signal: AbortSignal): Promise<{ text: string; isError: boolean; report?: string }> {
    const conn = this.conns.get(server);
    const state = this.states.get(server);
    if (!conn || state?.error) return { text: `not run: the MCP server ${server} is not available in this run: ${state?.error ?? 'it is not configured'}`, isError: true };
    const res: CallOutcome = await conn.call(tool, input, signal);
    if (res.ok) return { text: resultText(res.result), isError: res.result.isError === true };
    if (res.kind === 'timeout') return { text: res.error, isError: true, report: res.error };
    if (res.kind === 'gone' && !this.reportedGone.has(server)) {
      this.reportedGone.add(server);
      return { text: res.error, isError: true, report: res.error };
    }
    return { text: res.error, isError: true };
  }

  /** Kills every server now. Synchronous; safe to repeat. */
  killAll(): void {
    for (const c of this.conns.values()) c.kill();
  }
}
