/**
 * Definitions people write in YAML: `agents/<id>/agent.yaml`,
 * `environments/<id>.yaml` and a scripted agent's `script.yaml` (SPEC §3).
 * Unknown fields are rejected so a typo is an error, not a silent default.
 */
import * as z from 'zod';
import { DefinitionId } from './common.js';
import { ContextSettings } from './context.js';
import { ModelSettingsFields } from './model-settings.js';
import { EscalationSettings, GuardSettings } from './guards.js';
import { DEFAULT_MAX_CHILDREN, DEFAULT_MAX_SPAWN_DEPTH, DEFAULT_MAX_SPAWNS_PER_MINUTE, DEFAULT_MAX_TREE_SESSIONS, MAX_TREE_SESSIONS_LIMIT, Roster } from './roster.js';
import { Pricing } from './pricing.js';
import { DEFAULT_MEMORY_SETTINGS, MemorySettings } from './memory.js';
import { ENV_NAME, EnvValue, SecretRef } from './secret-ref.js';
import { ProviderSettingsFields, providerSettingsIssues } from './provider-settings.js';
import { MCP_TOOL_PREFIX, McpServers } from './mcp.js';
import { HeartbeatSettings } from './recurrence.js';
import { AllowedHost, NetworkPosture } from './network.js';
import { EnvironmentPackages } from './packages.js';

/** Built-in tools every agent has unless disabled (names as Managed Agents' toolset, plus our own). */
export const BUILTIN_TOOL_NAMES = [
  'bash',
  'read',
  'write',
  'edit',
  'glob',
  'grep',
  'web_fetch',
  'schedule_wake',
  'cancel_wake',
  'list_wakes',
  'skill',
  'escalate',
  'spawn_session',
  'send_to_session',
  'list_sessions',
  'message_parent',
  'learn',
  'promote',
  'search_sessions',
  'read_session',
  'todo',
] as const;
export type BuiltinToolName = (typeof BUILTIN_TOOL_NAMES)[number];

export const Permission = z.enum(['always_allow', 'always_ask', 'disabled']);
export type Permission = z.infer<typeof Permission>;

export const ToolConfig = z.strictObject({ permission: Permission });

const TOOL_NAME = /^[a-zA-Z0-9_-]{1,128}$/;

export const CustomTool = z.strictObject({
  name: z.string().regex(TOOL_NAME, 'expected 1-128 letters, digits, _ or -'),
  description: z.string().min(1),
  input_schema: z.looseObject({ type: z.literal('object') }),
});
export type CustomTool = z.infer<typeof CustomTool>;

/** How outcomes are graded (docs/outcomes.md). */
export const OutcomeSettings = z.strictObject({
  /** The rubric grader's model; default: the agent's own. */
  grader_model: z.string().min(1).optional(),
});

/** max_output_tokens when agent.yaml does not say: 8,192, or a quarter of a smaller window (a local model's 8,000) so the conversation keeps room. */
export const defaultMaxOutputTokens = (window: number) => Math.min(8192, Math.floor(window / 4));

export const Limits = z
  .strictObject({
  /** Model calls one run may make before it stops with retries_exhausted. */
  max_model_requests_per_wake: z.number().int().positive().default(12),
  /** Wall-clock bound of one run. */
  max_wake_seconds: z.number().positive().default(600),
  /** max_tokens of each model request (default: defaultMaxOutputTokens of the window). */
  max_output_tokens: z.number().int().positive().optional(),
  /** Size of the model's window; the context is compacted to fit it. */
  context_window_tokens: z.number().int().positive().default(200_000),
  /** Total tokens (input + output) the session may spend; null = no cap. */
  session_token_budget: z.number().int().positive().nullable().default(null),
  /** How deep below its root a session of this agent may spawn a child (docs/delegation.md). */
  max_spawn_depth: z.number().int().nonnegative().max(64, 'expected at most 64 (deeper trees are not checked against their root\'s budget)').default(DEFAULT_MAX_SPAWN_DEPTH),
  /** Children one session of this agent may spawn. */
  max_children: z.number().int().nonnegative().default(DEFAULT_MAX_CHILDREN),
  /** Sessions a session tree may hold, its root included, before this agent's spawns are refused; binds the whole tree below, like max_spawn_depth. */
  max_tree_sessions: z.number().int().positive().max(MAX_TREE_SESSIONS_LIMIT, `expected at most ${MAX_TREE_SESSIONS_LIMIT} (an interrupt's cascade reads at most that many sessions)`).default(DEFAULT_MAX_TREE_SESSIONS),
  /** Children spawned in that tree in any 60 s (on the runtime's clock). */
  max_spawns_per_minute: z.number().int().nonnegative().default(DEFAULT_MAX_SPAWNS_PER_MINUTE),
  /**
   * What all of this agent's sessions may spend on model requests in one UTC
   * day, in USD (run/spend-budget.ts); null = no budget. 80 % writes a
   * warning, 100 % stops its runs until the next UTC day or a raised budget.
   */
  daily_budget_usd: z.number().positive().nullable().default(null),
})
  .superRefine((l, ctx) => {
    // A reply as large as the window leaves the conversation nothing: every request would be refused, or cut to nothing.
    if (l.max_output_tokens !== undefined && l.max_output_tokens >= l.context_window_tokens) {
      ctx.addIssue({ code: 'custom', path: ['max_output_tokens'], message: `expected less than limits.context_window_tokens (${l.context_window_tokens}): the window holds the conversation as well as the reply` });
    }
  })
  .transform((l) => ({ ...l, max_output_tokens: l.max_output_tokens ?? defaultMaxOutputTokens(l.context_window_tokens) }));
export type Limits = z.infer<typeof Limits>;

export const AgentDefinition = z
  .strictObject({
    description: z.string().default(''),
    provider: z.enum(['anthropic', 'scripted', 'openai']).default('anthropic'),
    model: z.string().min(1).default('claude-sonnet-5'),
    system: z.string().default(''),
    environment: DefinitionId.default('local'),
    tools: z.partialRecord(z.enum(BUILTIN_TOOL_NAMES), ToolConfig).default({}),
    custom_tools: z.array(CustomTool).default([]),
    limits: Limits.default(Limits.parse({})),
    outcomes: OutcomeSettings.default({}),
    context: ContextSettings.default(ContextSettings.parse({})),
    guards: GuardSettings.default(GuardSettings.parse({})),
    escalation: EscalationSettings.default({ auto_resolve_above: null }),
    delegates: Roster.optional(),
    /** USD per million tokens by model, over data/pricing.json's (docs/delegation.md). */
    pricing: Pricing.default({}),
    /** The memory directory at /memory and cross-session search (docs/memory.md). */
    memory: MemorySettings.default(DEFAULT_MEMORY_SETTINGS),
    script: z.string().min(1).optional(),
    ...ModelSettingsFields,
    /** provider openai: the endpoint and the key's secret reference (schema/provider-settings.ts). */
    ...ProviderSettingsFields,
    /** Tools from MCP servers (schema/mcp.ts; docs/mcp.md). */
    mcp_servers: McpServers.default([]),
    /** A recurring revisit of every root session (schema/recurrence.ts; docs/daemon.md, "Heartbeats"). */
    heartbeat: HeartbeatSettings.optional(),
    /** Runs of this agent's sessions at once across every daemon on the home (docs/daemon.md); absent: no limit. */
    max_concurrent_runs: z.number().int().positive().max(10_000).optional(),
  })
  .superRefine((a, ctx) => {
    if (a.provider === 'scripted' && !a.script) {
      ctx.addIssue({ code: 'custom', path: ['script'], message: 'expected a script file for provider scripted' });
    }
    for (const issue of providerSettingsIssues(a)) ctx.addIssue({ code: 'custom', ...issue });
    const seen = new Set<string>(BUILTIN_TOOL_NAMES);
    a.custom_tools.forEach((t, i) => {
      if (seen.has(t.name)) {
        ctx.addIssue({ code: 'custom', path: ['custom_tools', i, 'name'], message: `tool name "${t.name}" is already taken` });
      }
      if (t.name.startsWith(MCP_TOOL_PREFIX)) {
        ctx.addIssue({ code: 'custom', path: ['custom_tools', i, 'name'], message: `tool name "${t.name}" starts with "${MCP_TOOL_PREFIX}", which names MCP servers' tools` });
      }
      seen.add(t.name);
    });
  });
export type AgentDefinition = z.infer<typeof AgentDefinition>;

export { SecretRef, EnvValue };

export const Mount = z.strictObject({
  source: z.string().min(1),
  target: z.string().regex(/^\/[^\0]*$/, 'expected an absolute path inside the sandbox'),
  mode: z.enum(['ro', 'rw']).default('ro'),
});
export type Mount = z.infer<typeof Mount>;

export const EnvironmentDefinition = z.strictObject({
  description: z.string().default(''),
  /** auto = bwrap where it works here, else unshare for the network only. process = no isolation (explicit opt-in). */
  sandbox: z.enum(['auto', 'bwrap', 'process']).default('auto'),
  /** none: nothing; host: the host's network; limited: only through the daemon's egress proxy, to what the lists below allow (docs/sandbox.md, "Network"). */
  network: NetworkPosture.default('none'),
  /** network: limited only. Hosts the sandbox and web_fetch may reach (schema/network.ts, AllowedHost). */
  allowed_hosts: z.array(AllowedHost).max(1000).default([]),
  /** network: limited only. Adds the npm registry and the Debian archives (egress/package-hosts.ts). */
  allow_package_managers: z.boolean().default(false),
  /** network: limited only. Adds the hosts of the agent's HTTP MCP servers. */
  allow_mcp_servers: z.boolean().default(false),
  mounts: z.array(Mount).default([]),
  /** npm and apt packages, installed once per environment version into a cache mounted read-only at /opt/openboa/packages (docs/sandbox.md, "Packages"). */
  packages: EnvironmentPackages.default({ npm: [], apt: [] }),
  env: z
    .record(z.string().regex(ENV_NAME, 'expected an environment variable name'), EnvValue)
    .default({}),
  shell: z
    .strictObject({
      timeout_seconds: z.number().positive().default(120),
      output_limit_chars: z.number().int().positive().default(100_000),
    })
    .default({ timeout_seconds: 120, output_limit_chars: 100_000 }),
})
  .superRefine((e, ctx) => {
    if (e.network === 'limited') return;
    for (const key of ['allowed_hosts', 'allow_package_managers', 'allow_mcp_servers'] as const) {
      const v = e[key];
      if (v === false || (Array.isArray(v) && v.length === 0)) continue;
      ctx.addIssue({ code: 'custom', path: [key], message: `${key} applies only to network: limited (this environment says network: ${e.network})` });
    }
  });
export type EnvironmentDefinition = z.infer<typeof EnvironmentDefinition>;

/**
 * One scripted model turn: text and/or tool calls. The scripted provider
 * answers the session's N-th model request with turns[N] (N counts the
 * assistant turns already in the conversation), so a replay is deterministic.
 */
export const ScriptTurn = z.strictObject({
  text: z.string().optional(),
  tool_calls: z
    .array(z.strictObject({ name: z.string().min(1), input: z.record(z.string(), z.unknown()).default({}) }))
    .default([]),
});
export type ScriptTurn = z.infer<typeof ScriptTurn>;

/** A scripted grader's answer: what grade_outcome would have been called with. */
export const ScriptGrade = z.strictObject({
  result: z.enum(['satisfied', 'needs_revision', 'failed']),
  explanation: z.string().min(1),
});
export type ScriptGrade = z.infer<typeof ScriptGrade>;

export const Script = z.strictObject({
  turns: z.array(ScriptTurn).min(1),
  /**
   * The rubric grader's answers: evaluation i of an outcome gets grades[i]
   * (the last one again past the end). Without any, a rubric grade is
   * satisfied.
   */
  grades: z.array(ScriptGrade).default([]),
  /** What to answer once every turn was used. */
  fallback: z.string().default('(the script has no more turns)'),
});
export type Script = z.infer<typeof Script>;
