/**
 * The guards of issue 15 as the loop gets them (docs/context.md, "Guards:
 * failure detection" and "Escalation"), set from agent.yaml `guards` and
 * `escalation`: the tool policy wrapped by the DuplicateRead guard and the
 * escalate tool's filing, and the after-turn guards, StaleLoop before
 * PrematureIntent (one nudge per turn: the stale loop's wins).
 */
import type { AfterTurnHook, ToolPolicy } from './loop-hooks.js';
import type { RunContext } from './run-context.js';
import { catalogPolicy } from './tool-policy.js';
import { duplicateReadPolicy } from './duplicate-read-guard.js';
import { escalationPolicy } from './escalation-policy.js';
import { staleLoopGuard } from './stale-loop-guard.js';
import { prematureIntentGuard } from './premature-intent-guard.js';

/** The catalog's permissions with the repeat guard, the DuplicateRead guard, and the escalate tool's filing. */
export function guardedToolPolicy(ctx: RunContext): ToolPolicy {
  const def = ctx.agent.def;
  return escalationPolicy(duplicateReadPolicy(catalogPolicy(ctx.catalog), def.guards.duplicate_read), def.escalation);
}

/** The after-turn guards, in order. */
export function failureGuards(ctx: RunContext): AfterTurnHook[] {
  const g = ctx.agent.def.guards;
  return [staleLoopGuard(g.stale_loop), prematureIntentGuard(g.premature_intent)];
}
