/**
 * The tools one agent is offered: built-ins with their permission policy
 * from agent.yaml (default always_allow, or BUILTIN_DEFAULT_PERMISSIONS;
 * `disabled` ones are not offered),
 * plus the agent's custom tools (run by the client; the session pauses for
 * the result). The JSON Schema the model sees is generated from each tool's
 * zod input schema. Input is validated before a tool runs; a bad input is an
 * error result naming the field, never an exception.
 */
import * as z from 'zod';
import { BUILTIN_TOOL_NAMES, type AgentDefinition, type BuiltinToolName, type Permission } from '../schema/index.js';
import { describeIssues } from '../store/parse-line.js';
import { bashTool } from './bash-tool.js';
import { webFetchTool } from './web-fetch-tool.js';
import { editTool, globTool, grepTool, readTool, writeTool } from './file-tools.js';
import { cancelWakeTool, listWakesTool, scheduleWakeTool } from './wake-tools.js';
import { skillTool } from './skill-tool.js';
import { escalateTool } from './escalate-tool.js';
import { learnTool } from './learn-tool.js';
import { promoteTool } from './promote-tool.js';
import { readSessionTool, searchSessionsTool } from './search-tools.js';
import { todoTool } from './todo-tool.js';
import { delegationToolApplies, listSessionsTool, messageParentTool, sendToSessionTool, spawnDescription, spawnSessionTool } from './delegation-tools.js';
import { limitOutput } from './output-limit.js';
import { fail, type Tool, type ToolContext, type ToolOutput } from './tool.js';
import { malformedArguments, malformedInputError } from './tool-arguments.js';
import type { ToolSource } from './tool-source.js';
import type { ToolDefinition } from '../model/provider.js';

import type { NewEvent, SessionEvent } from '../schema/index.js';

export const BUILTIN_TOOLS: Record<BuiltinToolName, Tool> = {
  bash: bashTool as Tool,
  read: readTool as Tool,
  write: writeTool as Tool,
  edit: editTool as Tool,
  glob: globTool as Tool,
  grep: grepTool as Tool,
  web_fetch: webFetchTool as Tool,
  schedule_wake: scheduleWakeTool as Tool,
  cancel_wake: cancelWakeTool as Tool,
  list_wakes: listWakesTool as Tool,
  skill: skillTool as Tool,
  escalate: escalateTool as Tool,
  spawn_session: spawnSessionTool as Tool,
  send_to_session: sendToSessionTool as Tool,
  list_sessions: listSessionsTool as Tool,
  message_parent: messageParentTool as Tool,
  learn: learnTool as Tool,
  promote: promoteTool as Tool,
  search_sessions: searchSessionsTool as Tool,
  read_session: readSessionTool as Tool,
  todo: todoTool as Tool,
};

/**
 * Built-ins whose permission, when agent.yaml says nothing, is not
 * always_allow: promote changes what every later session sees, so a
 * person confirms it (docs/memory.md, "Promotion").
 */
export const BUILTIN_DEFAULT_PERMISSIONS: Partial<Record<BuiltinToolName, Permission>> = {
  promote: 'always_ask',
};

export interface CatalogEntry {
  name: string;
  kind: 'builtin' | 'custom' | 'mcp';
  permission: Permission;
  definition: ToolDefinition;
  /** An MCP tool's server and its name there. */
  mcp?: McpTarget;
}

/** Which server's tool an `mcp__<server>__<tool>` call is. */
export interface McpTarget {
  server: string;
  tool: string;
}

/**
 * How a call is handled: run it, pause for a person, pause for the client,
 * or refuse it. `mcp` is set for a call of a configured MCP server (even a
 * refused one: its tool is not offered, or the server did not start).
 */
export type Evaluation = ({ kind: 'run'; permission: 'allow' } | { kind: 'ask'; permission: 'ask' } | { kind: 'custom' } | { kind: 'deny'; permission: 'deny'; why: string }) & { mcp?: McpTarget };

/** A JSON Schema for the model: no $schema, no giant date-time regexes. */
export function modelSchema(schema: z.ZodType): ToolDefinition['input_schema'] {
  const js = z.toJSONSchema(schema, { io: 'input' }) as Record<string, unknown>;
  delete js.$schema;
  const strip = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(strip);
    if (v && typeof v === 'object') {
      const o = { ...(v as Record<string, unknown>) };
      if (o.format === 'date-time') delete o.pattern;
      for (const k of Object.keys(o)) o[k] = strip(o[k]);
      return o;
    }
    return v;
  };
  return strip(js) as ToolDefinition['input_schema'];
}

/** The built-ins' schemas never change in a process: generate each once. */
const builtinSchemas = new Map<string, ToolDefinition['input_schema']>();
function builtinSchema(name: BuiltinToolName): ToolDefinition['input_schema'] {
  let s = builtinSchemas.get(name);
  if (!s) {
    s = modelSchema(BUILTIN_TOOLS[name].input);
    builtinSchemas.set(name, s);
  }
  return s;
}

export class ToolCatalog {
  private readonly fixed: CatalogEntry[];
  private readonly mcp: ToolSource | null;

  /** `opts.mcp`: tools a run service brings (the MCP servers'); they join the catalog once the service opened. */
  constructor(agent: Pick<AgentDefinition, 'tools' | 'custom_tools' | 'delegates'>, opts: { hasSkills: boolean; isChild?: boolean; mcp?: ToolSource | null }) {
    const entries: CatalogEntry[] = [];
    for (const name of BUILTIN_TOOL_NAMES) {
      const permission = agent.tools[name]?.permission ?? BUILTIN_DEFAULT_PERMISSIONS[name] ?? 'always_allow';
      if (name === 'skill' && !opts.hasSkills && !agent.tools.skill) continue;
      if (!delegationToolApplies(name, agent, opts.isChild === true)) continue;
      const t = BUILTIN_TOOLS[name];
      const description = name === 'spawn_session' ? spawnDescription(agent) : t.description;
      entries.push({ name, kind: 'builtin', permission, definition: { name, description, input_schema: builtinSchema(name) } });
    }
    for (const c of agent.custom_tools) {
      entries.push({
        name: c.name,
        kind: 'custom',
        permission: 'always_ask',
        definition: { name: c.name, description: c.description, input_schema: c.input_schema as ToolDefinition['input_schema'] },
      });
    }
    this.fixed = entries;
    this.mcp = opts.mcp ?? null;
  }

  /** Built-ins, custom tools, then the MCP tools (sorted by name; none before the hub started). */
  get entries(): CatalogEntry[] {
    if (!this.mcp || this.mcp.tools.length === 0) return this.fixed;
    const taken = new Set(this.fixed.map((e) => e.name));
    const mcp = this.mcp.tools
      .filter((t) => !taken.has(t.name))
      .map((t): CatalogEntry => ({ name: t.name, kind: 'mcp', permission: t.permission, definition: { name: t.name, description: t.description, input_schema: t.input_schema }, mcp: { server: t.server, tool: t.tool } }));
    return [...this.fixed, ...mcp];
  }

  /** The definitions sent to the model: everything not disabled. */
  get offered(): ToolDefinition[] {
    return this.entries.filter((e) => e.permission !== 'disabled').map((e) => e.definition);
  }

  evaluate(name: string): Evaluation {
    const found = this.entries.filter((x) => x.name === name);
    // Two entries of one name (never offered so, see McpHub.start): which one the model meant is unknown, so neither runs.
    if (found.length > 1) return { kind: 'deny', permission: 'deny', why: `the name ${JSON.stringify(name)} is offered twice in this run; neither is run` };
    const e = found[0];
    if (!e) {
      const target = this.mcp?.target(name);
      if (target) {
        const why = this.mcp?.unavailable(target.server);
        return { kind: 'deny', permission: 'deny', why: why ? `the MCP server ${target.server} is not available in this run: ${why}` : `the MCP server ${target.server} offers no tool named ${JSON.stringify(target.tool)} in this run`, mcp: target };
      }
      return { kind: 'deny', permission: 'deny', why: `there is no tool named ${JSON.stringify(name)}` };
    }
    if (e.mcp) return e.permission === 'always_ask' ? { kind: 'ask', permission: 'ask', mcp: e.mcp } : { kind: 'run', permission: 'allow', mcp: e.mcp };
    if (e.kind === 'custom') return { kind: 'custom' };
    if (e.permission === 'disabled') return { kind: 'deny', permission: 'deny', why: `the tool ${name} is disabled for this agent` };
    if (e.permission === 'always_ask') return { kind: 'ask', permission: 'ask' };
    return { kind: 'run', permission: 'allow' };
  }

  /** The event a call of a source's tool is recorded as (an agent.mcp_tool_use). */
  record(target: McpTarget, call: { modelToolUseId: string; input: unknown; permission: 'allow' | 'ask' | 'deny' }): NewEvent {
    if (!this.mcp) throw new Error(`no tool source offers ${target.server}/${target.tool}`);
    return this.mcp.record(target, call);
  }

  /** The source whose tool a logged use calls (null: a built-in). */
  sourceOf(use: SessionEvent): ToolSource | null {
    return this.mcp?.owns(use) ? this.mcp : null;
  }

  /** Validates and runs a built-in tool; every failure is an error result. */
  async execute(name: string, rawInput: unknown, ctx: ToolContext): Promise<ToolOutput> {
    const tool = (BUILTIN_TOOLS as Record<string, Tool>)[name];
    if (!tool) return fail(`there is no built-in tool named ${JSON.stringify(name)}`);
    const malformed = malformedArguments(rawInput);
    if (malformed !== null) return fail(malformedInputError(name, malformed));
    const parsed = tool.input.safeParse(rawInput ?? {});
    if (!parsed.success) return fail(`invalid input for ${name}: ${describeIssues(parsed.error)}`);
    let out: ToolOutput;
    try {
      out = await tool.run(parsed.data, ctx);
    } catch (e) {
      out = fail(`${name} failed: ${(e as Error).message}`);
    }
    const text = ctx.sandbox.hideHostPaths(ctx.redactor.text(out.text));
    return { isError: out.isError, text: await limitOutput(text, ctx.outputLimitChars, { sandbox: ctx.sandbox, toolUseId: ctx.toolUseId, signal: ctx.signal }) };
  }
}
