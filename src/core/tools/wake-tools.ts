/**
 * The agent's own revisits (SPEC §5): schedule_wake, cancel_wake,
 * list_wakes. Each writes to (or reads) the session's wake-queue.jsonl; a
 * scheduled revisit is a normal `wake.scheduled` record with source `agent`.
 */
import { iso } from '../clock.js';
import { CancelWakeInput, ListWakesInput, ScheduleWakeInput } from '../schema/index.js';
import { fail, ok, type Tool } from './tool.js';

/** More pending revisits than this is almost certainly a loop. */
export const MAX_PENDING_WAKES = 20;

export const scheduleWakeTool: Tool<typeof ScheduleWakeInput> = {
  name: 'schedule_wake',
  description:
    'Schedule a revisit of this session: after delay_seconds, or at a time. On the revisit you are woken with the reason. Use it instead of waiting or polling.',
  input: ScheduleWakeInput,
  async run(input, ctx) {
    const now = ctx.clock.now();
    const due = input.at !== undefined ? Date.parse(input.at) : now + (input.delay_seconds as number) * 1000;
    const snap = ctx.store.snapshot(ctx.sessionId);
    if (snap.pending_wakes.length >= MAX_PENDING_WAKES) {
      return fail(`there are already ${snap.pending_wakes.length} pending revisits (the limit is ${MAX_PENDING_WAKES}); cancel some with cancel_wake first`);
    }
    const rec = ctx.store.scheduleWake(ctx.sessionId, { due_at: iso(Math.max(due, now)), reason: input.reason, source: 'agent', wake_run_id: ctx.wakeId });
    return ok(`scheduled ${rec.id} for ${rec.due_at}${due < now ? ' (the time was in the past: due now)' : ''}`);
  },
};

export const cancelWakeTool: Tool<typeof CancelWakeInput> = {
  name: 'cancel_wake',
  description: 'Cancel one of your pending revisits by its id.',
  input: CancelWakeInput,
  async run(input, ctx) {
    const snap = ctx.store.snapshot(ctx.sessionId);
    if (!snap.pending_wakes.some((w) => w.id === input.wake_id)) {
      return fail(`${input.wake_id} is not a pending revisit (pending: ${snap.pending_wakes.map((w) => w.id).join(', ') || 'none'})`);
    }
    ctx.store.settleWakes(ctx.sessionId, 'wake.cancelled', [input.wake_id], { reason: 'cancelled by the agent' });
    return ok(`cancelled ${input.wake_id}`);
  },
};

export const listWakesTool: Tool<typeof ListWakesInput> = {
  name: 'list_wakes',
  description: 'List your pending revisits (id, due time, reason).',
  input: ListWakesInput,
  async run(_input, ctx) {
    const snap = ctx.store.snapshot(ctx.sessionId);
    if (snap.pending_wakes.length === 0) return ok('no pending revisits');
    return ok(snap.pending_wakes.map((w) => `${w.id}  due ${w.due_at}  (${w.source})  ${w.reason}`).join('\n'));
  },
};
