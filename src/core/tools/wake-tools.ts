/**
 * The agent's own revisits (SPEC §5): schedule_wake, cancel_wake,
 * list_wakes. Each writes to (or reads) the session's wake-queue.jsonl; a
 * scheduled revisit is a normal `wake.scheduled` record with source `agent`,
 * a repeating one with its rule (`every`, or `cron` and `timezone`).
 */
import { iso } from '../foundation/clock.js';
import { CancelWakeInput, ListWakesInput, ScheduleWakeInput, recurrenceOf } from '../schema/index.js';
import { describeRecurrence, firstFiringFrom } from '../schedule/recurrence.js';
import { fail, ok, type Tool } from './tool.js';

/** More pending revisits than this is almost certainly a loop. */
export const MAX_PENDING_WAKES = 20;
/** Recurring revisits the agent may keep at once (the heartbeat and a person's do not count): each one spends a run at every firing. */
export const MAX_RECURRING_WAKES = 5;

export const scheduleWakeTool: Tool<typeof ScheduleWakeInput> = {
  name: 'schedule_wake',
  description:
    'Schedule a revisit of this session: after delay_seconds or at a time, or repeating (every, cron). Each revisit wakes you with the reason. Use it instead of waiting or polling; cancel_wake stops a repeating one.',
  input: ScheduleWakeInput,
  async run(input, ctx) {
    const now = ctx.clock.now();
    const rule = recurrenceOf(input);
    const startMs = input.at !== undefined ? Date.parse(input.at) : input.delay_seconds !== undefined ? now + input.delay_seconds * 1000 : undefined;
    const snap = ctx.store.snapshot(ctx.sessionId);
    if (snap.pending_wakes.length >= MAX_PENDING_WAKES) {
      return fail(`there are already ${snap.pending_wakes.length} pending revisits (the limit is ${MAX_PENDING_WAKES}); cancel some with cancel_wake first`);
    }
    const recurring = snap.pending_wakes.filter((w) => w.recurrence !== null && w.source === 'agent');
    if (rule && recurring.length >= MAX_RECURRING_WAKES) {
      return fail(`you already have ${recurring.length} repeating revisits (the limit is ${MAX_RECURRING_WAKES}: ${recurring.map((w) => w.id).join(', ')}); cancel one with cancel_wake first`);
    }
    if (!rule) {
      const due = startMs as number;
      const rec = ctx.store.scheduleWake(ctx.sessionId, { due_at: iso(Math.max(due, now)), reason: input.reason, source: 'agent', wake_run_id: ctx.wakeId });
      return ok(`scheduled ${rec.id} for ${rec.due_at}${due < now ? ' (the time was in the past: due now)' : ''}`);
    }
    const first = firstFiringFrom(rule, now, startMs === undefined ? undefined : Math.max(startMs, now));
    if (first === null) return fail(`cron: "${input.cron}" never fires from now on`);
    const rec = ctx.store.scheduleWake(ctx.sessionId, { due_at: iso(first), reason: input.reason, source: 'agent', wake_run_id: ctx.wakeId, recurrence: rule });
    return ok(`scheduled ${rec.id}, ${describeRecurrence(rule)}; first revisit ${rec.due_at}. Cancel it with cancel_wake when it is no longer needed.`);
  },
};

export const cancelWakeTool: Tool<typeof CancelWakeInput> = {
  name: 'cancel_wake',
  description: 'Cancel one of your pending revisits by its id; a repeating one stops for good.',
  input: CancelWakeInput,
  async run(input, ctx) {
    const snap = ctx.store.snapshot(ctx.sessionId);
    const w = snap.pending_wakes.find((x) => x.id === input.wake_id);
    if (!w) {
      return fail(`${input.wake_id} is not a pending revisit (pending: ${snap.pending_wakes.map((x) => x.id).join(', ') || 'none'})`);
    }
    if (w.source === 'heartbeat') return fail(`${input.wake_id} is your heartbeat, set in agent.yaml; it cannot be cancelled from here`);
    ctx.store.settleWakes(ctx.sessionId, 'wake.cancelled', [input.wake_id], { reason: 'cancelled by the agent' });
    return ok(`cancelled ${input.wake_id}${w.recurrence ? ' and every revisit it would have made' : ''}`);
  },
};

export const listWakesTool: Tool<typeof ListWakesInput> = {
  name: 'list_wakes',
  description: 'List your pending revisits (id, due time, reason); a repeating one shows its next time and its rule.',
  input: ListWakesInput,
  async run(_input, ctx) {
    const snap = ctx.store.snapshot(ctx.sessionId);
    if (snap.pending_wakes.length === 0) return ok('no pending revisits');
    return ok(snap.pending_wakes.map((w) => `${w.id}  due ${w.due_at}${w.recurrence ? `  ${describeRecurrence(w.recurrence)}` : ''}  (${w.source})  ${w.reason}`).join('\n'));
  },
};
