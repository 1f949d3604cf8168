/**
 * Tools a run service brings beside the built-ins and the custom tools (an
 * MCP hub's: mcp/mcp-service.ts): what the catalog offers of them, how a
 * call of one is recorded, and how it runs. The catalog and the tool policy
 * read them through this interface; neither names the service.
 */
import type { NewEvent, SessionEvent } from '../schema/index.js';
import type { ToolOutput } from './tool.js';
import type { McpTarget } from './catalog.js';
import type { RunJournal } from '../run/journal.js';
import type { RunContext } from '../run/run-context.js';

export interface SourceTool {
  name: string;
  description: string;
  input_schema: { type: 'object'; [k: string]: unknown };
  permission: 'always_allow' | 'always_ask' | 'disabled';
  server: string;
  tool: string;
}

export interface ToolSource {
  /** The tools it offers now (none before its service opened). */
  readonly tools: readonly SourceTool[];
  /** Which of its tools `name` would be, offered or not; null when the name is not one of its. */
  target(name: string): McpTarget | null;
  /** Why a target's server is not available in this run, or null. */
  unavailable(server: string): string | null;
  /** The event a call of one of its tools is recorded as. */
  record(target: McpTarget, call: { modelToolUseId: string; input: unknown; permission: 'allow' | 'ask' | 'deny' }): NewEvent;
  /** Whether a logged tool use is a call of one of its tools. */
  owns(use: SessionEvent): boolean;
  /** Runs one allowed (or confirmed) call; every failure is an error result. */
  execute(ctx: RunContext, journal: RunJournal, use: SessionEvent): Promise<ToolOutput>;
}
