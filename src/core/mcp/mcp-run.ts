/**
 * The MCP servers in a run: starting them when the run opens (a server
 * that does not start is a session.error naming it; the run goes on with
 * the other tools) and running one confirmed or allowed call (its result
 * redacted and bounded like a built-in tool's; a server that crashed or
 * timed out is a session.error too). The hub itself is in mcp-hub.ts.
 */
import type { RunContext } from '../run/run-context.js';
import type { RunJournal } from '../run/journal.js';
import type { SessionEvent } from '../schema/index.js';

type McpToolUseEvent = Extract<SessionEvent, { type: 'agent.mcp_tool_use' }>;
import type { ToolOutput } from '../tools/tool.js';
import { limitOutput } from '../tools/output-limit.js';
import type { McpHub } from './mcp-hub.js';

/** A session.error about one server (Managed Agents' mcp_connection_failed_error, with the server's name). */
function serverError(journal: RunJournal, server: string, code: string, message: string): void {
  journal.emit([{ type: 'session.error', error: { type: 'mcp_connection_failed_error', mcp_server_name: server, code, message, retry_status: { type: 'exhausted' } } }]);
  journal.noteErrors([message]);
}

/** Starts the run's MCP servers, once; cut short by the run's signal, which also kills them. */
export async function startMcpServers(hub: McpHub, ctx: RunContext, journal: RunJournal): Promise<void> {
  if (hub.empty) return;
  const signal = ctx.control.signal;
  // Any abort (interrupt, shutdown, deadline, a lost lease) kills every server at once, mid-call or not.
  signal.addEventListener('abort', () => hub.killAll(), { once: true });
  if (signal.aborted) hub.killAll();
  const failed = await hub.start(signal);
  // Cut short while starting: the run ends the way its abort asks; the servers were not at fault.
  if (signal.aborted) return;
  for (const f of failed) serverError(journal, f.server, 'mcp_server_start_failed', `MCP server ${f.server} did not start: ${f.error}; its tools are not offered in this run`);
}

/** Runs one MCP tool use; every failure is an error result. */
export async function runMcpTool(hub: McpHub, ctx: RunContext, journal: RunJournal, use: McpToolUseEvent): Promise<ToolOutput> {
  const res = await hub.call(use.mcp_server_name, use.name, use.input, ctx.control.signal);
  if (res.report) serverError(journal, use.mcp_server_name, 'mcp_tool_call_failed', `MCP server ${use.mcp_server_name}, tool ${use.name}: ${res.report}`);
  const text = ctx.env.redactor.text(res.text);
  return { isError: res.isError, text: await limitOutput(text, ctx.environment.def.shell.output_limit_chars, { sandbox: ctx.sandbox, toolUseId: use.id, signal: ctx.control.signal }) };
}
