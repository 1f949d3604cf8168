/**
 * MCP servers in agent.yaml (`mcp_servers`) and the two events a call of
 * one of their tools becomes (docs/mcp.md). A server is either a stdio
 * command the runtime starts outside the agent's sandbox, or a Streamable
 * HTTP endpoint reached by URL. Their tools are offered to the model as
 * `mcp__<server>__<tool>`; the log keeps the server and the tool apart
 * (`mcp_server_name`, `name`), as Managed Agents does.
 */
import * as z from 'zod';
import { TextBlock } from './common.js';
import { ENV_NAME, EnvValue } from './secret-ref.js';

/**
 * A server's name: what its tools are prefixed with. No `__`, and no `_` at
 * either end, so the server of `mcp__<server>__<tool>` is unambiguous:
 * servers `a` and `a_` would both offer `mcp__a___x` (tools `_x` and `x`).
 */
export const MCP_SERVER_NAME = /^[a-zA-Z0-9_-]{1,32}$/;

/** The prefix of every MCP tool's name as the model sees it. */
export const MCP_TOOL_PREFIX = 'mcp__';

/** Tool names the model APIs accept (64: the tighter of the providers' limits). */
export const MODEL_TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/** Default bound of one tool call, and of a server's start (spawn or connect, initialize, list its tools). */
export const DEFAULT_MCP_CALL_SECONDS = 60;
export const DEFAULT_MCP_START_SECONDS = 30;

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

const serverName = z
  .string()
  .regex(MCP_SERVER_NAME, 'expected 1-32 letters, digits, _ or -')
  .refine((n) => !n.includes('__'), 'expected no "__" in a server name (it separates the server from the tool in mcp__<server>__<tool>)')
  .refine((n) => !n.startsWith('_') && !n.endsWith('_'), 'expected a server name that does not start or end with "_" (mcp__<server>__<tool> would not say where the server ends)');

const common = {
  name: serverName,
  /** always_ask (the default): every call waits for `openboa confirm`, so a tool newly added to a server cannot run unapproved. */
  permission: z.enum(['always_ask', 'always_allow']).default('always_ask'),
  /** Bound of one tool call, seconds. */
  timeout_seconds: z.number().positive().max(3600).default(DEFAULT_MCP_CALL_SECONDS),
  /** Bound of the server's start, seconds. */
  start_timeout_seconds: z.number().positive().max(600).default(DEFAULT_MCP_START_SECONDS),
};

/** A stdio server: a command the runtime starts (not sandboxed: it runs as the daemon's user). */
export const McpStdioServer = z.strictObject({
  ...common,
  command: z.string().min(1),
  args: z.array(z.string()).default([]),
  /** Its whole environment besides PATH, HOME, LANG and the like: values may be secret references. */
  env: z.record(z.string().regex(ENV_NAME, 'expected an environment variable name'), EnvValue).default({}),
});
export type McpStdioServer = z.infer<typeof McpStdioServer>;

/** A Streamable HTTP server; the environment's network policy decides whether its URL may be reached. */
export const McpHttpServer = z.strictObject({
  ...common,
  url: z.url({ protocol: /^https?$/, error: 'expected an http:// or https:// URL' }),
  /** Request headers (e.g. Authorization): values may be secret references. */
  headers: z.record(z.string().regex(HEADER_NAME, 'expected an HTTP header name'), EnvValue).default({}),
});
export type McpHttpServer = z.infer<typeof McpHttpServer>;

/** One entry of `mcp_servers`: `command` makes it stdio, `url` Streamable HTTP. */
export const McpServer = z.union([McpStdioServer, McpHttpServer], { error: 'expected an MCP server: {name, command, args?, env?} or {name, url, headers?} (with permission?, timeout_seconds?, start_timeout_seconds?)' });
export type McpServer = z.infer<typeof McpServer>;

/** Servers one agent may have (each is a process or a connection per run). */
export const MAX_MCP_SERVERS = 16;

export const McpServers = z
  .array(McpServer)
  .max(MAX_MCP_SERVERS)
  .superRefine((list, ctx) => {
    const seen = new Set<string>();
    list.forEach((s, i) => {
      if (seen.has(s.name)) ctx.addIssue({ code: 'custom', path: [i, 'name'], message: `MCP server name "${s.name}" is used twice` });
      seen.add(s.name);
    });
  });

export function isStdioServer(s: McpServer): s is McpStdioServer {
  return 'command' in s;
}

/** The name the model sees for a server's tool. */
export function mcpToolName(server: string, tool: string): string {
  return `${MCP_TOOL_PREFIX}${server}__${tool}`;
}

/** agent.mcp_tool_use: `name` is the tool's name on its server; the model called it as mcpToolName(mcp_server_name, name). */
export const McpToolUseFields = {
  name: z.string(),
  mcp_server_name: z.string(),
  input: z.record(z.string(), z.unknown()),
  /** Ours, as on agent.tool_use: the model's id of the call. */
  model_tool_use_id: z.string(),
  evaluated_permission: z.enum(['allow', 'ask', 'deny']),
};

/** agent.mcp_tool_result: the server's content as text blocks (redacted, bounded by the environment's output limit). */
export const McpToolResultFields = {
  mcp_tool_use_id: z.string(),
  content: z.array(TextBlock),
  is_error: z.boolean(),
};
