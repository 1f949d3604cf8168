/**
 * The built-in `todo` tool (docs/runs.md, "The plan"): the agent keeps its
 * working plan, a list of steps each `pending`, `in_progress` or `done`,
 * and sends the whole list on every call. The call and its result in the
 * log are the record (there is no event type of its own): the plan is the
 * input of the session's last successful `todo` call, which
 * runtime/plan.json mirrors (run/plan-file.ts), `openboa status` shows and
 * the stale-loop guard reads (a step newly done is progress).
 *
 * The tool itself touches nothing: the catalog validated the list against
 * TodoInput (a bad list is an error result naming the field), so its
 * success is the plan taking effect.
 */
import { TodoInput, type TodoItem } from '../schema/index.js';
import { ok, type Tool } from './tool.js';

export const TODO_DESCRIPTION =
  'Keep your working plan for this session: send the whole list of steps every time, each with its status (pending, in_progress, done); it replaces the previous list. Use it for work of several steps: write the plan before you start, mark a step in_progress when you begin it and done as soon as it is finished, and add or drop steps as you learn more. People watching the session see this list; the current one is also in /runtime/plan.json.';

/** `3 steps: 1 done, 1 in progress, 1 pending`. */
export function planSummary(items: readonly TodoItem[]): string {
  if (items.length === 0) return 'no steps';
  const n = (status: string) => items.filter((i) => i.status === status).length;
  return `${items.length} step${items.length === 1 ? '' : 's'}: ${n('done')} done, ${n('in_progress')} in progress, ${n('pending')} pending`;
}

export const todoTool: Tool<typeof TodoInput> = {
  name: 'todo',
  description: TODO_DESCRIPTION,
  input: TodoInput,
  async run(input) {
    return ok(input.items.length === 0 ? 'Plan cleared.' : `Plan updated: ${planSummary(input.items)}.`);
  },
};
