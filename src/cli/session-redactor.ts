import { sessionRedactor } from '../core/run/environment.js';
import type { CliContext } from './command.js';

/** From here on, everything this command prints hides the session's secrets (as this process's environment has them). */
export function redactFor(ctx: CliContext, sessionId: string): void {
  const s = ctx.store.snapshot(sessionId);
  ctx.out.redactor = sessionRedactor(ctx.home, s.environment_id, s.overrides, ctx.deps.env);
}
