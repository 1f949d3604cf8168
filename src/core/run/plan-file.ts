/**
 * The agent's plan (docs/runs.md, "The plan"), derived from the log: the
 * input of the session's last successful `todo` call (an agent.tool_use
 * named `todo` whose agent.tool_result is not an error). Managed Agents has
 * no event type for a plan, so the call and its result are the record.
 *
 * runtime/plan.json (`{items, updated_at}`, PlanFile) mirrors it, rewritten
 * (temp file + rename, through RuntimeFiles) as the run starts, after each
 * turn that called `todo`, and as the run ends. Each rewrite reads the
 * run's recent events (the window's tail and what the run wrote since,
 * guard-log.ts): a session whose last `todo` call lies further back than
 * that keeps the file an earlier run wrote from the same call. A session
 * that never called `todo` has no plan.json.
 */
import { TodoInput, type PlanFile, type SessionEvent, type TodoItem } from '../schema/index.js';
import type { AfterRunHook, AfterTurnHook, RunService } from './loop-hooks.js';
import type { RunContext } from './run-context.js';
import { recentEvents } from './guard-log.js';

export const TODO = 'todo';

/** A successful `todo` call: its use's id, the plan it set, and when its result was logged. */
export interface PlanChange {
  useId: string;
  items: TodoItem[];
  at: string;
}

/** The successful `todo` calls among `events` (oldest first), in the order their results were logged. */
export function planChanges(events: readonly SessionEvent[]): PlanChange[] {
  const uses = new Map<string, TodoItem[]>();
  const out: PlanChange[] = [];
  for (const e of events) {
    if (e.type === 'agent.tool_use' && e.name === TODO) {
      // The catalog ran it only if it parsed: a use that does not parse never has a successful result.
      const parsed = TodoInput.safeParse(e.input);
      if (parsed.success) uses.set(e.id, parsed.data.items);
    } else if (e.type === 'agent.tool_result' && !e.is_error) {
      const items = uses.get(e.tool_use_id);
      if (items) out.push({ useId: e.tool_use_id, items, at: e.created_at });
    }
  }
  return out;
}

/** The plan as of the newest successful `todo` call among `events`, or null when there is none. */
export function planOf(events: readonly SessionEvent[]): PlanFile | null {
  const last = planChanges(events).at(-1);
  return last ? { items: last.items, updated_at: last.at } : null;
}

/**
 * Whether `next` marks a step done that `prev` did not have done: some
 * content is done more times in `next` than in `prev` (a new step that
 * arrives done counts; renaming a done step counts as a new one).
 */
export function marksDone(prev: readonly TodoItem[], next: readonly TodoItem[]): boolean {
  const done = new Map<string, number>();
  for (const i of prev) if (i.status === 'done') done.set(i.content, (done.get(i.content) ?? 0) + 1);
  for (const i of next) {
    if (i.status !== 'done') continue;
    const left = done.get(i.content) ?? 0;
    if (left === 0) return true;
    done.set(i.content, left - 1);
  }
  return false;
}

/**
 * The `todo` uses among `events` that made progress: successful, and
 * marking a step done against the plan of the call before (an empty plan
 * when there is none among `events`).
 */
export function progressingPlanChanges(events: readonly SessionEvent[]): Set<string> {
  const out = new Set<string>();
  let prev: readonly TodoItem[] = [];
  for (const c of planChanges(events)) {
    if (marksDone(prev, c.items)) out.add(c.useId);
    prev = c.items;
  }
  return out;
}

/** Rewrites runtime/plan.json from the run's recent events; leaves it as it is when they hold no plan. Never throws. */
export function writePlanFile(ctx: RunContext, events: readonly SessionEvent[]): void {
  if (ctx.control.silenced) return;
  const plan = planOf(events);
  if (plan) ctx.files.json('plan.json', plan);
}

/** Writes runtime/plan.json as the run starts (a run that died before writing it leaves it behind the log). */
export function planStartFile(): RunService {
  return { name: 'plan file', startFiles: (ctx) => writePlanFile(ctx, ctx.window.recent.map((l) => l.event)) };
}

/**
 * Rewrites runtime/plan.json after a turn that called `todo` (so it is live
 * while the run goes on) and when the run ends (a call a person confirmed
 * runs outside any turn). Changes no verdict and no ending.
 */
export function planFile(): AfterTurnHook & AfterRunHook {
  return {
    afterTurn(ctx, journal, turn) {
      if (turn?.uses.some((u) => u.type === 'agent.tool_use' && u.name === TODO)) writePlanFile(ctx, recentEvents(ctx, journal));
      return undefined;
    },
    afterRun(ctx, journal, ending) {
      writePlanFile(ctx, recentEvents(ctx, journal));
      return ending;
    },
  };
}
