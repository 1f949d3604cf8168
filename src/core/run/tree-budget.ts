/**
 * The session token budget over a session tree (docs/delegation.md). A
 * session's `session_token_budget` covers it and every descendant: its own
 * spend is counted over its tree (its usage plus each child's latest
 * reported tree usage, session.json `tree_usage`), and a descendant's run
 * checks every ancestor that has a budget, adding its own spend so far in
 * this run. When any of them is spent, the run stops with `budget_reached`,
 * naming whose budget it was. Ancestors are read once per run; what they
 * spend meanwhile reaches this run through the next report.
 */
import { totalTokens } from '../store/fold.js';
import type { SessionSnapshot } from '../schema/index.js';
import type { RunJournal } from './journal.js';
import type { Ending, RunContext } from './run-context.js';
import type { Bound } from './loop-hooks.js';
import { loadAgent } from '../definitions/definitions.js';
import { runSlot } from './run-state.js';

const BUDGETS = runSlot<{ budgets: Budgeted[] | null }>('tree budgets', () => ({ budgets: null }));

/** treeBudgets of the run, read once (the ancestors' agents loaded through `agentBudget`). */
export function runBudgets(ctx: RunContext, agentBudget: (s: SessionSnapshot) => number | null): Budgeted[] {
  const slot = ctx.state.get(BUDGETS);
  return (slot.budgets ??= treeBudgets(ctx, agentBudget));
}

/** Ancestors walked at most (a loop in a hand-edited log must not hang a run). */
const MAX_DEPTH = 64;

interface Budgeted {
  id: string;
  budget: number;
  /** Tokens spent over its tree before this run. */
  spent: number;
}

const tokens = (s: SessionSnapshot) => s.tree_usage.input_tokens + s.tree_usage.output_tokens;

function budgetOf(s: SessionSnapshot, agentBudget: number | null): number | null {
  const o = s.overrides.session_token_budget;
  return o !== undefined ? o : agentBudget;
}

/**
 * The budgets that bound this run: its own (over its tree) and each
 * ancestor's that has one. An ancestor's budget comes from its own
 * overrides, or from its agent's definition when `agentBudget` can say.
 */
export function treeBudgets(ctx: RunContext, agentBudget: (s: SessionSnapshot) => number | null): Budgeted[] {
  const out: Budgeted[] = [];
  const self = ctx.startSnapshot;
  const own = budgetOf(self, ctx.agent.def.limits.session_token_budget);
  if (own !== null) out.push({ id: self.id, budget: own, spent: Math.max(tokens(self), totalTokens(self)) });
  let parent = self.parent_session_id;
  for (let i = 0; parent && i < MAX_DEPTH; i++) {
    let a: SessionSnapshot;
    try {
      a = ctx.rt.store.snapshot(parent, { persist: false });
    } catch {
      break; // an ancestor that is gone bounds nothing
    }
    const b = budgetOf(a, agentBudget(a));
    if (b !== null) out.push({ id: a.id, budget: b, spent: tokens(a) });
    parent = a.parent_session_id;
  }
  return out;
}

/** The first budget this run has spent, as the ending it calls for; null while every one holds. */
export function budgetEnding(ctx: RunContext, journal: RunJournal, budgets: readonly Budgeted[]): Ending | null {
  const run = journal.usage.input_tokens + journal.usage.output_tokens;
  for (const b of budgets) {
    const spent = b.spent + run;
    if (spent < b.budget) continue;
    const message =
      b.id === ctx.sessionId
        ? `the session spent ${spent} tokens of its budget of ${b.budget}${Object.keys(ctx.startSnapshot.children).length ? ' (its child sessions included)' : ''}; raise session_token_budget to go on`
        : `the session tree of ${b.id} spent ${spent} tokens of that session's budget of ${b.budget}; raise its session_token_budget to go on`;
    journal.error({ code: 'session_token_budget', message, retry: 'exhausted' });
    return { kind: 'idle', stop: { type: 'budget_reached' } };
  }
  return null;
}

/** An ancestor's agent's session_token_budget; null when its agent does not load (its own overrides still count). */
function ancestorBudget(ctx: RunContext, a: { agent_id: string }): number | null {
  try {
    return loadAgent(ctx.rt.home, a.agent_id).def.limits.session_token_budget;
  } catch {
    return null;
  }
}

/** The bound of the session's budget over its tree, and of each ancestor's over theirs. */
export function treeBudget(): Bound {
  return { check: (ctx, journal) => budgetEnding(ctx, journal, runBudgets(ctx, (a) => ancestorBudget(ctx, a))) };
}
