import { Redactor } from '../core/foundation/redact.js';
import { agentSecrets } from '../core/run/agent-secrets.js';
import { sessionRedactor } from '../core/run/environment.js';
import type { CliContext } from './command.js';

/** From here on, everything this command prints hides the session's secrets (as this process's environment has them). */
export function redactFor(ctx: CliContext, sessionId: string): void {
  const s = ctx.store.snapshot(sessionId);
  ctx.out.redactor = sessionRedactor(ctx.home, s.environment_id, s.overrides, ctx.deps.env);
}

/**
 * From here on, everything this command prints hides every secret the
 * agent's sessions can hold (agent-secrets.ts, as this process's environment
 * has them): for what the agent's sessions share (memory, learnings).
 * Returns the Redactor, for what the command writes as well as prints.
 */
export function redactForAgent(ctx: CliContext, agentId: string): Redactor {
  const r = new Redactor(agentSecrets(ctx.home, agentId, ctx.deps.env, ctx.deps.models));
  ctx.out.redactor = r;
  return r;
}
