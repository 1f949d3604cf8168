/**
 * An agent's daily spend budget (limits.daily_budget_usd; docs/observability.md,
 * "Spend budgets"), as a bound checked before each model request and an
 * after-run hook.
 *
 * What an agent spent on a UTC day is kept in a ledger shared by all of its
 * sessions, `<home>/spend/<agent>/<YYYY-MM-DD>.jsonl`: one line per record,
 * appended in one write (so concurrent runs of the agent never tear it),
 * `{at, session_id, run_id, cost_usd}` for what a run spent since its last
 * line, and `{at, session_id, warned: 0.8}` once the warning was given. Each
 * run adds its cost there before each request and after its last; a crash
 * between a reply and the next record loses that reply's cost from the
 * ledger (the log still has it), so the budget may let through a little more
 * than it says, never less.
 *
 * - At 80 %: a session.error with code `spend_budget_warning` (retry_status
 *   retrying: the session goes on), once a day for the agent.
 * - At 100 %: a session.error `spend_budget_exhausted`, and the run is
 *   rescheduled to the next 00:00 UTC; the session then goes on by itself.
 *   A person who raises the budget in agent.yaml runs it at once with
 *   `openboa wake <id>` (a manual run skips the wait).
 */
import fs from 'node:fs';
import path from 'node:path';
import { iso } from '../foundation/clock.js';
import type { Home } from '../foundation/home.js';
import { roundUsd } from '../schema/index.js';
import type { AfterRunHook, Bound } from './loop-hooks.js';
import type { RunContext } from './run-context.js';
import type { RunJournal } from './journal.js';

/** The share of the budget at which the warning is written. */
export const WARN_AT = 0.8;

const DAY_MS = 86_400_000;
const utcDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const usd = (x: number) => `$${x.toFixed(2)}`;

/** The ledger of an agent's spend on a UTC day. */
export function ledgerPath(home: Home, agentId: string, day: string): string {
  return path.join(home.root, 'spend', agentId, `${day}.jsonl`);
}

/** What the ledger says the agent spent that day, and whether the warning was given. A torn or bad line is skipped. */
export function readLedger(file: string): { spent: number; warned: boolean } {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { spent: 0, warned: false };
    throw e;
  }
  let spent = 0;
  let warned = false;
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    try {
      const j = JSON.parse(line) as { cost_usd?: unknown; warned?: unknown };
      if (typeof j.cost_usd === 'number' && Number.isFinite(j.cost_usd) && j.cost_usd > 0) spent += j.cost_usd;
      if (j.warned !== undefined) warned = true;
    } catch {
      // a torn last line: skipped
    }
  }
  return { spent, warned };
}

function append(file: string, record: Record<string, unknown>): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.appendFileSync(file, `${JSON.stringify(record)}\n`);
}

/** What the run's requests cost so far (its replies', graders' and summaries'). */
function runCost(journal: RunJournal): number {
  let c = 0;
  for (const e of journal.written) {
    if (e.type === 'span.model_request_end') c += e.cost_usd ?? 0;
    else if (e.type === 'span.outcome_evaluation_end') c += e.cost_usd ?? 0;
  }
  return c;
}

export function spendBudget(): Bound & AfterRunHook {
  /** This run's cost already in a ledger. */
  let recorded = 0;

  /** Adds what the run spent since its last record to today's ledger. */
  const record = (ctx: RunContext, journal: RunJournal, file: string) => {
    const cost = runCost(journal) - recorded;
    if (cost <= 0 || journal.silenced) return;
    append(file, { at: iso(ctx.rt.deps.clock.now()), session_id: ctx.sessionId, run_id: ctx.runId, cost_usd: cost });
    recorded += cost;
  };

  return {
    check(ctx, journal) {
      const budget = ctx.agent.def.limits.daily_budget_usd;
      if (budget === null) return null;
      const now = ctx.rt.deps.clock.now();
      const day = utcDay(now);
      const file = ledgerPath(ctx.rt.home, ctx.agent.id, day);
      record(ctx, journal, file);
      const { spent, warned } = readLedger(file);
      // In billionths of a dollar, as costs are rounded: 0.8 × $0.025 is $0.02, not a float's 0.020000000000000004.
      if (roundUsd(spent) >= roundUsd(budget)) {
        const until = iso(Date.parse(`${day}T00:00:00.000Z`) + DAY_MS);
        const message = `agent ${ctx.agent.id} spent ${usd(spent)} of its daily budget of ${usd(budget)} (limits.daily_budget_usd) on ${day} (UTC); its runs stop until ${until}, or until the budget is raised (then: openboa wake ${ctx.sessionId})`;
        journal.error({ code: 'spend_budget_exhausted', message, retry: 'retrying' });
        return { kind: 'rescheduled', reason: `spend_budget_exhausted: ${message}`, retryAt: until };
      }
      if (roundUsd(spent) >= roundUsd(WARN_AT * budget) && !warned) {
        append(file, { at: iso(now), session_id: ctx.sessionId, warned: WARN_AT });
        journal.error({ code: 'spend_budget_warning', message: `agent ${ctx.agent.id} has spent ${usd(spent)} of its daily budget of ${usd(budget)} (limits.daily_budget_usd) on ${day} (UTC): ${Math.floor((spent / budget) * 100)} %; at 100 % its runs stop until the next UTC day`, retry: 'retrying' });
      }
      return null;
    },
    afterRun(ctx, journal, ending) {
      if (ctx.agent.def.limits.daily_budget_usd !== null) record(ctx, journal, ledgerPath(ctx.rt.home, ctx.agent.id, utcDay(ctx.rt.deps.clock.now())));
      return ending;
    },
  };
}
