/**
 * wake(sessionId): one bounded run of a session (SPEC §6), the function the
 * daemon, `openboa wake` and the tests all call.
 *
 *  1. Take the session lease (busy → OpenboaError 'busy', nothing written).
 *  2. Fold the journals; report bad lines; bring the heartbeat in line
 *     with agent.yaml (heartbeat.ts); decide what there is to do.
 *     Nothing → `skipped`, and the log is not touched.
 *  3. Reconcile a crashed run: a tool use with no result gets an error
 *     result ("outcome unknown"), never a second execution.
 *  4. Append session.status_running (the user events and wakes taken in),
 *     then consume the wakes.
 *  5. Settle answers (confirmations), then the loop (loop.ts) with the
 *     run's hooks (default-hooks.ts), then the after-run hooks.
 *  6. Append how it ended (status_idle / status_rescheduled), rewrite
 *     runtime/ and session.json, release the lease.
 *  7. The after-close hooks: what the ending means beyond the run (a child
 *     that ended idle reports to its parent, child-report.ts), after its
 *     ending is in the log, so a crash between the two is repaired from
 *     the two logs, never reported twice.
 *
 * This module is the orchestration only: opening a run is open-run.ts,
 * what it writes goes through its journal (journal.ts), settling is
 * settle.ts. Model and tool failures are data in the log; wake() only
 * throws `busy` and `not_found`, before it has written anything.
 */
import { iso } from '../foundation/clock.js';
import type { Lease } from '../foundation/lease.js';
import { takeSessionLease } from '../store/session-lease.js';
import { runIdAfter } from '../foundation/ids.js';
import { OpenboaError } from '../foundation/errors.js';
import { Redactor } from '../foundation/redact.js';
import { drainInbox } from '../store/inbox.js';
import { INBOX_REPORT_CODE } from '../store/fold.js';
import type { PendingWake, SessionEvent, SessionSnapshot } from '../schema/index.js';
import { takenId } from '../store/wake-queue-fold.js';
import { nextFiring } from '../schedule/recurrence.js';
import { createdAtOf, planRun, type RunPlan } from './plan.js';
import { runContext } from './system-prompt.js';
import { RunJournal } from './journal.js';
import { runLoop } from './loop.js';
import { defaultHooks, defaultPreparers, defaultServices } from './default-hooks.js';
import { loadDefinitions, openRun, writeStartFiles, type Definitions } from './open-run.js';
import { applyInterrupt, closeForInterrupt, finishInterrupt, reconcile, settleAnswers, settleLateAnswers } from './settle.js';
import { rescheduleAfter, rescheduledEvent, retryingError } from './failed-attempt.js';
import { type Ending, type RunContext, type Runtime } from './run-context.js';
import { RunControl } from './run-control.js';
import { type WakeOptions, type WakeResult } from './wake-api.js';
import { observe, type LoopHooks } from './loop-hooks.js';
import { usePromptSections } from './prompt-sections.js';

export { MAX_WAKE_ATTEMPTS } from './default-hooks.js';

const ZERO = { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, model_requests: 0 };

export async function wake(rt: Runtime, sessionId: string, opts: WakeOptions = {}): Promise<WakeResult> {
  const { store, deps } = rt;
  const t0 = deps.clock.now();
  const paths = store.require(sessionId);
  let runId = deps.ids.run();
  // On a shared home, taken so that the fold below sees the last holder's writes (session-lease.ts).
  const lease = await takeSessionLease(paths, store.shared, { purpose: 'wake', wakeId: runId, nowIso: iso(t0), ...(opts.leaseStaleMs ? { staleMs: opts.leaseStaleMs } : {}) });
  const result = (snap: SessionSnapshot, over: Partial<WakeResult>): WakeResult => ({
    session_id: sessionId,
    outcome: 'executed',
    skip_reason: null,
    wake_id: runId,
    trigger: null,
    status: snap.status,
    parent_session_id: snap.parent_session_id ?? null,
    stop_reason: snap.stop_reason,
    retry_at: snap.retry_at,
    processed_event_ids: [],
    wakes_consumed: [],
    wakes_scheduled: [],
    errors: [],
    failure: null,
    usage: { ...ZERO },
    tool_calls: 0,
    outcome_evaluations: [],
    started_at: iso(t0),
    duration_ms: deps.clock.now() - t0,
    ...over,
  });
  try {
    let snap = store.snapshot(sessionId);
    // Files dropped into inbox/ enter the log first, under the lease, exactly once.
    const drained = drainInbox(paths, deps.ids, snap.inbox_taken);
    if (drained.lines > 0 || drained.files > 0) snap = store.snapshot(sessionId);
    // The log accepts a run only with an id newer than the last one (docs/format.md).
    runId = runIdAfter(runId, snap.last_wake_id);
    if (snap.last_wake_id !== null && runId <= snap.last_wake_id) {
      // No run id can follow the last one (only a run id at the very end of the range can cause this):
      // a run would be refused, and so would everything it wrote. Write nothing; say why.
      return result(snap, { outcome: 'skipped', skip_reason: 'no_run_id_left', wake_id: null, failure: { code: 'no_run_id_left', message: `no run id can follow the log's last run ${snap.last_wake_id}` } });
    }
    const reported = [...reportRejections(rt, sessionId, snap, runId), ...reportInboxProblems(rt, sessionId, drained.problems, runId)];
    if (reported.length) snap = store.snapshot(sessionId);
    // The queue follows the definitions before anything plans on it (a removed heartbeat starts no run).
    if (defaultPreparers.reduce((wrote, prepare) => prepare(rt, sessionId, snap) || wrote, false)) snap = store.snapshot(sessionId);
    let plan = planRun(snap, deps.clock.now(), opts);
    if (!plan.runnable) return result(snap, { outcome: 'skipped', skip_reason: plan.skipReason, wake_id: null, errors: reported });
    if (snap.pending_wakes.some((w) => w.provisional)) {
      // Pin hand-written delays now that the run will act on them.
      snap = store.snapshot(sessionId, { pin: true });
      plan = planRun(snap, deps.clock.now(), opts);
    }
    // Stopped (shutdown, interrupt) while the lease was being taken: do not start.
    if (opts.signal?.aborted) return result(snap, { outcome: 'skipped', skip_reason: 'aborted', wake_id: null, errors: reported });
    opts.onStart?.({ wakeId: runId, trigger: plan.trigger });
    return await execute(rt, { sessionId, runId, snap, plan, lease, t0, reported, opts, result });
  } finally {
    await lease.release();
  }
}

/**
 * Appends a session.error for every bad line not yet reported (under the
 * lease, so once), stamped with the id of the run about to start.
 */
function reportRejections(rt: Runtime, sessionId: string, snap: SessionSnapshot, runId: string): string[] {
  if (snap.rejected.length === 0) return [];
  rt.store.appendEvents(
    sessionId,
    snap.rejected.map((r) => ({
      type: 'session.error' as const,
      // retry_status terminal: this line will never be retried. Said in words, so it does not read as the session's end.
      error: { type: 'unknown_error' as const, code: r.code, message: `${r.message} (this line is skipped and never retried; the session goes on)`, retry_status: { type: 'terminal' as const } },
      line: r.line,
      ...(r.file !== 'events.jsonl' ? { file: r.file } : {}),
      ...(r.event_id ? { event_id: r.event_id } : {}),
    })),
    { wakeId: runId },
  );
  return snap.rejected.map((r) => r.message);
}

/**
 * Appends a session.error for each inbox/ file the drain refused (it is set
 * aside as inbox/.refused-<name>), under the lease, before any run opens, so
 * it is in the log even when nothing runs now. The drain reports each file
 * once.
 */
function reportInboxProblems(rt: Runtime, sessionId: string, problems: readonly string[], runId: string): string[] {
  if (problems.length === 0) return [];
  rt.store.appendEvents(
    sessionId,
    problems.map((message) => ({ type: 'session.error' as const, error: { type: 'unknown_error' as const, code: INBOX_REPORT_CODE, message, retry_status: { type: 'terminal' as const } } })),
    { wakeId: runId },
  );
  return [...problems];
}

interface ExecInput {
  sessionId: string;
  runId: string;
  snap: SessionSnapshot;
  plan: RunPlan;
  lease: Lease;
  t0: number;
  reported: string[];
  opts: WakeOptions;
  result: (snap: SessionSnapshot, over: Partial<WakeResult>) => WakeResult;
}

async function execute(rt: Runtime, x: ExecInput): Promise<WakeResult> {
  const { store, deps } = rt;
  const { sessionId, runId, snap, plan } = x;
  // Definitions: a broken agent.yaml or environment is a failed attempt, retried with backoff.
  let defs: Definitions;
  try {
    defs = loadDefinitions(rt, snap);
  } catch (e) {
    return failDefinitions(rt, x, OpenboaError.is(e) ? e.message : `cannot load the session's definitions: ${(e as Error).message}`);
  }

  const services = defaultServices();
  const opened = await openRun(rt, { sessionId, runId, snap, plan, lease: x.lease, wakeReason: describeReason(plan, snap), opts: x.opts, defs, services });
  const { ctx } = opened;
  const defaults = defaultHooks(ctx, defs.model, plan.wakes, services);
  const hooks = x.opts.hooks ? x.opts.hooks(defaults, ctx) : defaults;
  // The observers see each batch first: a caller's onEvents that throws must not hide it from them.
  const onEvents = (events: readonly SessionEvent[]) => {
    observe(hooks.observers, (o) => o.events?.(ctx, events));
    x.opts.onEvents?.(events);
  };
  const journal = new RunJournal({ store, sessionId, runId, redactor: ctx.env.redactor, control: ctx.control, reported: x.reported, onEvents });
  observe(hooks.observers, (o) => o.runStart?.(ctx, plan));
  const wakesScheduledBefore = new Set(snap.pending_wakes.map((w) => w.id));
  let ending: Ending;
  let runFailed: string | null = null;
  try {
    ending = await work(ctx, journal, hooks, plan, opened.skillProblems);
  } catch (e) {
    // A bug or an I/O failure: recorded, retried with backoff, never thrown at the daemon.
    const msg = `the run failed: ${(e as Error).message}`;
    runFailed = msg;
    // Writing would only add refused lines: stop here, say it in the result, back off.
    if (e instanceof RunRefused) ctx.control.abort({ kind: 'log_refused', message: msg });
    const f = { code: 'run_failed', message: msg };
    const reason = `run_failed: ${(e as Error).message}`;
    try {
      ending = journal.failedAttempt(rt, snap.consecutive_failures, f, reason);
    } catch {
      // the log itself is failing; the next start recovers from a `running` log
      ending = rescheduleAfter(rt, snap.consecutive_failures, f, reason);
    }
  } finally {
    opened.dispose();
  }

  if (ending.kind === 'idle') {
    journal.emit([{ type: 'session.status_idle', wake_id: runId, stop_reason: ending.stop, stop_details: ending.stop.type === 'refusal' ? { type: 'refusal', category: ending.details?.category ?? null, explanation: ending.details?.explanation ?? null } : null }]);
  } else if (ending.kind === 'rescheduled') {
    journal.emit([rescheduledEvent(ending)]);
  }
  const after = store.snapshot(sessionId);
  // What the ending means beyond the run (a child's report to its parent), once it is in the log.
  if (ending.kind !== 'lease_lost') {
    for (const h of hooks.afterClose) {
      try {
        h.afterClose(rt, sessionId, after, ending);
      } catch {
        // its own to repair later (loop-hooks.ts)
      }
    }
  }
  observe(hooks.observers, (o) => o.runEnd?.(ctx, ending, after));
  ctx.window.refresh(after);
  ctx.files.eventFeed(ctx.window.recent);
  const res = x.result(after, {
    trigger: plan.trigger,
    processed_event_ids: plan.take.map((p) => p.id),
    wakes_consumed: plan.wakes.map(takenId),
    wakes_scheduled: after.pending_wakes.filter((w) => !wakesScheduledBefore.has(w.id)).map((w) => w.id),
    errors: journal.errors,
    failure: failureOf(after, runFailed),
    usage: journal.usage,
    tool_calls: journal.toolCalls,
    outcome_evaluations: journal.written.flatMap((e) => (e.type === 'span.outcome_evaluation_end' ? [{ outcome_id: e.outcome_id, iteration: e.iteration, result: e.result }] : [])),
    duration_ms: deps.clock.now() - x.t0,
  });
  ctx.files.json(`traces/${runId}.json`, { ...res, events: journal.written.map((e) => ({ id: e.id, type: e.type, created_at: e.created_at })) });
  return res;
}

/**
 * The run's work, from opening its bracket to its ending (after the
 * after-run hooks). The run opens first: the log accepts runtime lines only
 * inside a run's bracket (docs/format.md). What follows is safe to redo
 * after a crash: a run that dies here is recovered, reconciles again, and
 * honours an interrupt it had taken in (snap.interrupt_taken) again,
 * harmlessly.
 */
async function work(ctx: RunContext, journal: RunJournal, hooks: LoopHooks, plan: RunPlan, skillProblems: string[]): Promise<Ending> {
  const { store, deps } = ctx.rt;
  const snap = ctx.startSnapshot;
  usePromptSections(ctx, hooks.promptSections);
  journal.emit([
    {
      type: 'session.status_running',
      wake_id: ctx.runId,
      trigger: plan.trigger,
      processed_event_ids: plan.take.map((p) => p.id),
      ...createdAtOf(plan.take),
      ...(plan.wakes.length ? { wakes: plan.wakes.map((w) => ({ id: takenId(w), reason: w.reason, due_at: w.due_at })) } : {}),
      // What changes from run to run goes into this run's user turn, not the (cached) system prompt.
      ...(plan.take.length || plan.wakes.length
        ? { context: runContext({ nowIso: iso(deps.clock.now()), wakeId: ctx.runId, trigger: plan.trigger, wakeReason: ctx.wakeReason, pendingWakes: pendingAfter(snap, plan, deps.clock.now()) }) }
        : {}),
    },
  ]);
  // The log must have accepted this run; if it did not (its run key was replaced, a clock far behind
  // a forged newer run), nothing more is written: every line would be refused, and reported, again.
  const opened = store.snapshot(ctx.sessionId, { persist: false });
  if (opened.running_wake_id !== ctx.runId) throw new RunRefused(`the log did not accept run ${ctx.runId} (last run ${opened.last_wake_id}); see session.json's rejected lines`);
  reconcile(journal, snap);
  // Work a gate stops (asked for before an ancestor was interrupted) is not done: the run stops as an interrupted one.
  const fromAbove = hooks.gates.some((g) => g.stops(ctx, journal, plan));
  const stopNow = plan.interrupt || fromAbove;
  if (stopNow) applyInterrupt(ctx, journal);
  journal.settleWakes('wake.consumed', [...plan.wakes.map(takenId), ...snap.wakes_taken], { wakeRunId: ctx.runId });
  const interrupted = stopNow || (plan.recovery && snap.interrupt_taken);
  const continues = !fromAbove && plan.take.some((p) => p.type === 'user.message' || p.type === 'user.define_outcome');
  // The run's services open once, before anything may call their tools (a run that only closes for an interrupt needs none).
  if (!interrupted || continues) for (const sv of hooks.services) await sv.open?.(ctx, journal);
  writeStartFiles(ctx, skillProblems, hooks.services);
  if (ctx.env.missingSecrets.length) {
    journal.error({ code: 'missing_secret', message: `environment ${ctx.environment.id}: the secret(s) ${ctx.env.missingSecrets.join(', ')} are not set in the daemon's environment; the shell runs without them`, retry: 'terminal' });
  }
  let ending: Ending;
  if (interrupted) {
    // A run that died while honouring an interrupt is finished the same way, not continued.
    if (!stopNow) applyInterrupt(ctx, journal);
    ending = continues ? await runLoop(ctx, journal, hooks) : { kind: 'idle', stop: { type: 'end_turn' } };
  } else {
    await settleAnswers(ctx, journal, hooks.tools, plan.take);
    const still = await settleLateAnswers(ctx, journal, hooks.tools);
    ending = still.length ? { kind: 'idle', stop: { type: 'requires_action', event_ids: still } } : await runLoop(ctx, journal, hooks);
  }
  if (ending.kind === 'interrupted') ending = finishInterrupt(ctx, journal);
  if (ending.kind !== 'lease_lost') {
    // One fold after the loop, shared by every after-run hook (loop-hooks.ts).
    const after = store.snapshot(ctx.sessionId, { persist: false });
    for (const h of hooks.afterRun) ending = await h.afterRun(ctx, journal, ending, after);
  }
  return ending;
}

/**
 * The session's definitions do not load: a failed attempt, written as a run
 * of its own in one write (opened, failed, closed). An interrupt needs no
 * model: it is honoured even now, so it cannot keep the session spinning.
 */
function failDefinitions(rt: Runtime, x: ExecInput, msg: string): WakeResult {
  const { store } = rt;
  const { sessionId, runId, snap, plan } = x;
  const journal = new RunJournal({ store, sessionId, runId, redactor: Redactor.none, control: new RunControl(), reported: x.reported });
  const f = { code: 'invalid_definition', message: msg };
  const ending = rescheduleAfter(rt, snap.consecutive_failures, f);
  const interrupts = plan.take.filter((p) => p.type === 'user.interrupt');
  // The run opens first: every line a run writes carries its id inside its bracket.
  journal.emit([{ type: 'session.status_running', wake_id: runId, trigger: plan.trigger, processed_event_ids: interrupts.map((p) => p.id) }]);
  let closing = rescheduledEvent(ending);
  if (interrupts.length || (plan.recovery && snap.interrupt_taken)) {
    closeForInterrupt(store, sessionId, journal);
    const rest = store.snapshot(sessionId, { persist: false }).pending_events.filter((p) => p.type !== 'user.interrupt');
    if (rest.length === 0) closing = { type: 'session.status_idle', wake_id: runId, stop_reason: { type: 'end_turn' }, stop_details: null };
  }
  journal.emit([retryingError(f), closing]);
  journal.noteErrors([msg]);
  const after = store.snapshot(sessionId);
  return x.result(after, { trigger: plan.trigger, processed_event_ids: interrupts.map((p) => p.id), errors: journal.errors, failure: { code: 'invalid_definition', message: msg } });
}

/** WakeResult.failure of an executed run, from how it ended (see its doc). */
function failureOf(after: SessionSnapshot, runFailed: string | null): WakeResult['failure'] {
  if (runFailed) return { code: 'run_failed', message: runFailed };
  const failed = after.status === 'rescheduling' || after.stop_reason?.type === 'retries_exhausted';
  if (!failed) return null;
  if (after.last_error) return { code: after.last_error.code ?? after.last_error.type, message: after.last_error.message };
  return { code: after.status === 'rescheduling' ? 'rescheduled' : 'retries_exhausted', message: after.status === 'rescheduling' ? `rescheduled until ${after.retry_at}` : 'the run gave up' };
}

/** The revisits still pending once this run has taken its own in: a recurring one at its next firing. */
function pendingAfter(snap: SessionSnapshot, plan: RunPlan, nowMs: number): PendingWake[] {
  const taken = new Set(plan.wakes.map((w) => w.id));
  return snap.pending_wakes.flatMap((w) => {
    if (!taken.has(w.id)) return [w];
    if (!w.recurrence) return [];
    const next = nextFiring(w.recurrence, Date.parse(w.due_at), nowMs);
    return next === null ? [] : [{ ...w, due_at: iso(next) }];
  });
}

/** The log refused this run's own opening record: it must not write anything more. */
class RunRefused extends Error {}

function describeReason(plan: RunPlan, snap: SessionSnapshot): string {
  if (plan.recovery) return 'recovering a run that was cut short';
  if (plan.take.length) return `${plan.take.length} new event(s): ${[...new Set(plan.take.map((p) => p.type))].join(', ')}`;
  if (plan.wakes.length) return plan.wakes.map((w) => w.reason).join('; ');
  if (snap.status === 'rescheduling') return 'retrying after a failure';
  return plan.trigger;
}
