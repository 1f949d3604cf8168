/**
 * What a tool is and what it may touch. Each tool declares its input as a
 * zod schema (from the schema module) and receives only the small context it
 * needs; results are data (`is_error`), never exceptions that end a run.
 */
import type * as z from 'zod';
import type { Clock } from '../foundation/clock.js';
import type { Redactor } from '../foundation/redact.js';
import type { SessionStore } from '../store/session-store.js';
import type { Sandbox } from '../sandbox/sandbox.js';
import type { Skill } from '../run/skills.js';
import type { AgentDefinition, NewEvent, SessionEvent } from '../schema/index.js';
import type { EgressAccess } from '../egress/egress-access.js';

export interface ToolContext {
  sessionId: string;
  wakeId: string;
  /** The tool use this call answers (an agent.tool_use event id). */
  toolUseId: string;
  clock: Clock;
  store: SessionStore;
  /** The shell and the files, as the agent sees them (src/core/sandbox/sandbox.ts). */
  sandbox: Sandbox;
  redactor: Redactor;
  skills: Skill[];
  /** Default bash timeout and output limit, from the environment. */
  shellTimeoutMs: number;
  outputLimitChars: number;
  /** Aborted on interrupt, shutdown, lease loss or the run's deadline. */
  signal: AbortSignal;
  /** The session's agent (the delegation tools read its roster and limits). */
  agent?: { id: string; def: AgentDefinition };
  /** Appends to this session's log through the run's journal: one write, redacted, nothing once the run is silenced. */
  emit?: (events: readonly NewEvent[]) => SessionEvent[];
  /**
   * When this run opened (its session.status_running). The delegation tools
   * stamp a child's task with it (`mandate_at`), and spawn nothing once this
   * session or one above it was interrupted after it (docs/delegation.md).
   */
  runOpenedAt?: string;
  /** The run's trace context (telemetry/traceparent.ts), when it is traced: the delegation tools put it on a child's task. */
  traceparent?: string;
  /** How many calls of this tool this run made so far, this one included (a per-run bound). */
  runUses?: (name: string) => number;
  /** The runtime's process environment (where `{secret: {env}}` values are read): read_session and search_sessions redact other sessions' secrets with it. */
  processEnv?: NodeJS.ProcessEnv;
  /** What web_fetch may reach: the environment's network rules and the run's egress log (egress/egress-access.ts). */
  egress?: EgressAccess;
}

export interface ToolOutput {
  text: string;
  isError: boolean;
}

export interface Tool<S extends z.ZodType = z.ZodType> {
  name: string;
  description: string;
  input: S;
  run(input: z.output<S>, ctx: ToolContext): Promise<ToolOutput>;
}

export const ok = (text: string): ToolOutput => ({ text, isError: false });
export const fail = (text: string): ToolOutput => ({ text, isError: true });
