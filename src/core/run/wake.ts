/**
 * wake(sessionId): one bounded run of a session (SPEC §6), the function the
 * daemon, `openboa wake` and the tests all call.
 *
 *  1. Take the session lease (busy → OpenboaError 'busy', nothing written).
 *  2. Fold the journals; report bad lines; decide what there is to do.
 *     Nothing → `skipped`, and the log is not touched.
 *  3. Reconcile a crashed run: a tool use with no result gets an error
 *     result ("outcome unknown"), never a second execution.
 *  4. Append session.status_running (the user events and wakes taken in),
 *     then consume the wakes.
 *  5. Settle answers (confirmations), then the Harness loop.
 *  6. Append how it ended (status_idle / status_rescheduled), rewrite
 *     runtime/ and session.json, release the lease.
 *
 * Model and tool failures are data in the log; wake() only throws `busy`
 * and `not_found`, before it has written anything.
 */
import { iso } from '../clock.js';
import { acquireLease, type Lease } from '../lease.js';
import { runIdAfter } from '../ids.js';
import { loadAgent, loadEnvironment, rel, type LoadedAgent } from '../definitions.js';
import { builtinModels } from '../model/registry.js';
import type { Home } from '../home.js';
import { OpenboaError } from '../errors.js';
import type { ModelProvider } from '../model/provider.js';
import { ToolCatalog } from '../tools/catalog.js';
import { hostSandbox } from '../sandbox/host-sandbox.js';
import { openActions } from '../store/fold.js';
import { drainInbox } from '../store/inbox.js';
import { INBOX_REPORT_CODE } from '../store/fold.js';
import { createdAtOf, planRun, type RunPlan } from './plan.js';
import type { NewEvent, PendingEvent, SessionEvent, SessionSnapshot } from '../schema/index.js';
import { buildRunEnvironment } from './environment.js';
import { LogWindow } from './log-window.js';
import { RuntimeFiles } from './runtime-files.js';
import { loadSkills } from './skills.js';
import { runHarness, runTool, error as appendError, type Ending } from './harness.js';
import { runContext } from './system-prompt.js';
import { backoffMs } from './backoff.js';
import type { AbortReason, RunState, Runtime, WakeOptions, WakeResult } from './run-state.js';


const ZERO = { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, model_requests: 0 };

export async function wake(rt: Runtime, sessionId: string, opts: WakeOptions = {}): Promise<WakeResult> {
  const { store, deps } = rt;
  const t0 = deps.clock.now();
  const paths = store.require(sessionId);
  let runId = deps.ids.run();
  const lease = await acquireLease(paths, { purpose: 'wake', wakeId: runId, nowIso: iso(t0), ...(opts.leaseStaleMs ? { staleMs: opts.leaseStaleMs } : {}) });
  const result = (snap: SessionSnapshot, over: Partial<WakeResult>): WakeResult => ({
    session_id: sessionId,
    outcome: 'executed',
    skip_reason: null,
    wake_id: runId,
    trigger: null,
    status: snap.status,
    stop_reason: snap.stop_reason,
    retry_at: snap.retry_at,
    processed_event_ids: [],
    wakes_consumed: [],
    wakes_scheduled: [],
    errors: [],
    failure: null,
    usage: { ...ZERO },
    tool_calls: 0,
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
  const paths = store.paths(sessionId);
  const emitBase = (events: NewEvent[]) => store.appendEvents(sessionId, events, { wakeId: runId });

  // Definitions: a broken agent.yaml or environment is a failed attempt, retried with backoff.
  let agent: LoadedAgent;
  let environment;
  let provider: ModelProvider;
  try {
    agent = loadAgent(rt.home, snap.agent_id);
    environment = loadEnvironment(rt.home, snap.environment_id);
    const factory = (deps.models ?? builtinModels)[agent.def.provider];
    if (!factory) throw new Error(`no model provider "${agent.def.provider}" is registered`);
    provider = factory(agent, rt.home, deps.env);
  } catch (e) {
    const msg = OpenboaError.is(e) ? e.message : `cannot load the session's definitions: ${(e as Error).message}`;
    const retryAt = iso(deps.clock.now() + backoffMs(snap.consecutive_failures, deps.random));
    const error: NewEvent = { type: 'session.error', error: { type: 'unknown_error', code: 'invalid_definition', message: msg, retry_status: { type: 'retrying' } } };
    // An interrupt needs no model: honour it even now, so it cannot keep the session spinning.
    // The run opens first: every line a run writes carries its id inside its bracket.
    const interrupts = plan.take.filter((p) => p.type === 'user.interrupt');
    emitBase([{ type: 'session.status_running', wake_id: runId, trigger: plan.trigger, processed_event_ids: interrupts.map((p) => p.id) }]);
    if (interrupts.length || (plan.recovery && snap.interrupt_taken)) {
      closeForInterrupt(store, sessionId, emitBase);
      const rest = store.snapshot(sessionId, { persist: false }).pending_events.filter((p) => p.type !== 'user.interrupt');
      emitBase([
        error,
        rest.length
          ? { type: 'session.status_rescheduled', reason: `invalid_definition: ${msg}`, retry_at: retryAt }
          : { type: 'session.status_idle', wake_id: runId, stop_reason: { type: 'end_turn' }, stop_details: null },
      ]);
    } else {
      emitBase([error, { type: 'session.status_rescheduled', reason: `invalid_definition: ${msg}`, retry_at: retryAt }]);
    }
    const after = store.snapshot(sessionId);
    return x.result(after, { trigger: plan.trigger, processed_event_ids: interrupts.map((p) => p.id), errors: [...x.reported, msg], failure: { code: 'invalid_definition', message: msg } });
  }

  const wakeReason = describeReason(plan, snap);
  const env = buildRunEnvironment({ home: rt.home, paths, def: environment.def, overrides: snap.overrides, daemonEnv: deps.env, sessionId, agentId: agent.id, wakeId: runId, wakeReason });
  const redactor = env.redactor;
  const { skills, problems } = loadSkills(agent.dir);
  const catalog = new ToolCatalog(agent.def, { hasSkills: skills.length > 0 });
  const files = new RuntimeFiles(paths.runtime, redactor);
  const controller = new AbortController();
  let abortReason: AbortReason | null = null;
  const abort = (r: AbortReason) => {
    if (abortReason) return;
    abortReason = r;
    controller.abort(r);
  };
  const onExternal = () => abort((x.opts.signal?.reason as AbortReason | undefined)?.kind ? (x.opts.signal?.reason as AbortReason) : { kind: 'shutdown' });
  x.opts.signal?.addEventListener('abort', onExternal, { once: true });
  if (x.opts.signal?.aborted) onExternal(); // aborted before we listened
  const onLease = () => abort({ kind: 'lease_lost', message: String((x.lease.signal.reason as Error)?.message ?? 'lease lost') });
  x.lease.signal.addEventListener('abort', onLease, { once: true });
  const deadlineS = agent.def.limits.max_wake_seconds;
  const cancelDeadline = deps.clock.setTimer(deadlineS * 1000, () => abort({ kind: 'deadline', seconds: deadlineS }));

  const written: SessionEvent[] = [];
  const run: RunState = {
    rt,
    sessionId,
    paths,
    runId,
    trigger: plan.trigger,
    wakeReason,
    startSnapshot: snap,
    agent,
    environment,
    env,
    provider,
    catalog,
    skills,
    sandbox: (deps.sandbox ?? hostSandbox)({
      isolation: env.posture?.isolation ?? 'unconfined',
      network: env.network,
      mounts: env.mounts,
      env: env.env,
      homeDir: env.homeDir,
      workspaceHost: paths.workspace,
      runtimeDir: paths.runtime,
      redactor,
      clock: deps.clock,
      unavailable: env.posture ? null : (env.sandboxError ?? 'no sandbox can run here'),
    }),
    window: new LogWindow(store, sessionId, snap, agent.def.limits.context_window_tokens * 6, () => deps.clock.now()),
    files,
    controller,
    abortReason: () => abortReason,
    abort,
    callCounts: new Map(),
    emptyReplies: 0,
    compacted: false,
    emit(events) {
      // Another process may own the log now, or the log refuses this run: either way, nothing more is written.
      if (abortReason?.kind === 'lease_lost' || abortReason?.kind === 'log_refused') return [];
      const out = store.appendEvents(sessionId, events, { wakeId: runId, redactor });
      written.push(...out);
      try {
        x.opts.onEvents?.(out);
      } catch {
        // an observer's failure is not the run's
      }
      return out;
    },
    written,
    usage: { ...ZERO },
    toolCalls: 0,
    errors: [...x.reported],
  };

  let ending: Ending | null = null;
  let runFailed: string | null = null;
  const wakesScheduledBefore = new Set(snap.pending_wakes.map((w) => w.id));
  try {
    // The run opens first: the log accepts runtime lines only inside a run's
    // bracket (docs/format.md). What follows is safe to redo after a crash:
    // a run that dies here is recovered, reconciles again, and honours an
    // interrupt it had taken in (snap.interrupt_taken) again, harmlessly.
    run.emit([
      {
        type: 'session.status_running',
        wake_id: runId,
        trigger: plan.trigger,
        processed_event_ids: plan.take.map((p) => p.id),
        ...createdAtOf(plan.take),
        ...(plan.wakes.length ? { wakes: plan.wakes.map((w) => ({ id: w.id, reason: w.reason, due_at: w.due_at })) } : {}),
        // What changes from run to run goes into this run's user turn, not the (cached) system prompt.
        ...(plan.take.length || plan.wakes.length
          ? {
              context: runContext({
                nowIso: iso(deps.clock.now()),
                wakeId: runId,
                trigger: plan.trigger,
                wakeReason,
                pendingWakes: snap.pending_wakes.filter((w) => !plan.wakes.some((x) => x.id === w.id)),
              }),
            }
          : {}),
      },
    ]);
    // The log must have accepted this run; if it did not (its run key was replaced, a clock far behind
    // a forged newer run), nothing more is written: every line would be refused, and reported, again.
    const opened = store.snapshot(sessionId, { persist: false });
    if (opened.running_wake_id !== runId) throw new RunRefused(`the log did not accept run ${runId} (last run ${opened.last_wake_id}); see session.json's rejected lines`);
    reconcile(run, snap);
    if (plan.interrupt) applyInterrupt(run);
    const toConsume = [...plan.wakes.map((w) => w.id), ...snap.wakes_taken];
    store.settleWakes(sessionId, 'wake.consumed', toConsume, { wakeRunId: runId });
    writeStartFiles(run, problems.map((p) => `${rel(rt.home, p.file)}: ${p.message}`));
    if (env.missingSecrets.length) {
      appendError(run, { type: 'unknown_error', code: 'missing_secret', message: `environment ${environment.id}: the secret(s) ${env.missingSecrets.join(', ')} are not set in the daemon's environment; the shell runs without them`, retry: 'terminal' });
    }
    if (plan.interrupt || (plan.recovery && snap.interrupt_taken)) {
      // A run that died while honouring an interrupt is finished the same way, not continued.
      if (!plan.interrupt) applyInterrupt(run);
      const continues = plan.take.some((p) => p.type === 'user.message' || p.type === 'user.define_outcome');
      ending = continues ? await runHarness(run) : { kind: 'idle', stop: { type: 'end_turn' } };
    } else {
      await settleAnswers(run, plan.take);
      const still = await settleLateAnswers(run);
      ending = still.length ? { kind: 'idle', stop: { type: 'requires_action', event_ids: still } } : await runHarness(run);
    }
    if (ending.kind === 'interrupted') ending = finishInterrupt(run);
  } catch (e) {
    // A bug or an I/O failure: recorded, retried with backoff, never thrown at the daemon.
    const msg = `the run failed: ${(e as Error).message}`;
    runFailed = msg;
    if (e instanceof RunRefused) {
      // Writing would only add refused lines: stop here, say it in the result, back off.
      abort({ kind: 'log_refused', message: msg });
    }
    try {
      appendError(run, { type: 'unknown_error', code: 'run_failed', message: msg, retry: 'retrying' });
    } catch {
      // the log itself is failing; the next start recovers from a `running` log
    }
    ending = { kind: 'rescheduled', reason: `run_failed: ${(e as Error).message}`, retryAt: iso(deps.clock.now() + backoffMs(snap.consecutive_failures, deps.random)) };
  } finally {
    cancelDeadline();
    x.opts.signal?.removeEventListener('abort', onExternal);
    x.lease.signal.removeEventListener('abort', onLease);
    run.sandbox.close();
  }

  if (ending.kind === 'idle') {
    // The retries first: a crash right after status_idle must not lose them.
    if (ending.terminalError && plan.wakes.length) retryWakes(run, plan);
    run.emit([{ type: 'session.status_idle', wake_id: runId, stop_reason: ending.stop, stop_details: ending.stop.type === 'refusal' ? { type: 'refusal', category: ending.details?.category ?? null, explanation: ending.details?.explanation ?? null } : null }]);
  } else if (ending.kind === 'rescheduled') {
    run.emit([{ type: 'session.status_rescheduled', reason: ending.reason, retry_at: ending.retryAt }]);
  }
  const after = store.snapshot(sessionId);
  run.window.refresh(after);
  files.eventFeed(run.window.recent);
  const res = x.result(after, {
    trigger: plan.trigger,
    processed_event_ids: plan.take.map((p) => p.id),
    wakes_consumed: plan.wakes.map((w) => w.id),
    wakes_scheduled: after.pending_wakes.filter((w) => !wakesScheduledBefore.has(w.id)).map((w) => w.id),
    errors: run.errors,
    failure: failureOf(after, runFailed),
    usage: run.usage,
    tool_calls: run.toolCalls,
    duration_ms: deps.clock.now() - x.t0,
  });
  files.json(`traces/${runId}.json`, { ...res, events: written.map((e) => ({ id: e.id, type: e.type, created_at: e.created_at })) });
  return res;
}

/** WakeResult.failure of an executed run, from how it ended (see its doc). */
function failureOf(after: SessionSnapshot, runFailed: string | null): WakeResult['failure'] {
  if (runFailed) return { code: 'run_failed', message: runFailed };
  const failed = after.status === 'rescheduling' || after.stop_reason?.type === 'retries_exhausted';
  if (!failed) return null;
  if (after.last_error) return { code: after.last_error.code ?? after.last_error.type, message: after.last_error.message };
  return { code: after.status === 'rescheduling' ? 'rescheduled' : 'retries_exhausted', message: after.status === 'rescheduling' ? `rescheduled until ${after.retry_at}` : 'the run gave up' };
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

/**
 * SPEC §6 step 3: a tool use whose outcome is unknown (its run died between
 * the call and the result) is closed with an error result. It is never run
 * a second time: it may have had its effect already.
 */
function reconcile(run: RunState, snap: SessionSnapshot) {
  const pendingIds = new Set(snap.pending_events.map((p) => p.id));
  const orphans = snap.open_tool_uses.filter((u) => {
    if (u.kind !== 'tool') return false;
    if (u.permission === 'allow') return true;
    // An answered ask whose answer a run already took in, but whose result never came.
    return u.permission === 'ask' && u.answered_by !== null && !pendingIds.has(u.answered_by);
  });
  if (orphans.length === 0) return;
  run.emit(orphans.map((u) => ({ type: 'agent.tool_result' as const, tool_use_id: u.id, content: [{ type: 'text' as const, text: 'outcome unknown: the run was interrupted before this tool call finished; it was not run again' }], is_error: true })));
}

function findEvent(run: RunState, id: string): SessionEvent | null {
  const inWindow = run.window.recent.find((e) => e.event.id === id);
  if (inWindow) return inWindow.event;
  for (const l of run.rt.store.readEvents(run.sessionId).lines) if (l.kind === 'event' && l.event.id === id) return l.event;
  return null;
}

/** Runs allowed tool uses with the input stored in the log, and denies the denied ones. */
async function settleAnswers(run: RunState, answers: readonly PendingEvent[]) {
  for (const p of answers) {
    if (p.type !== 'user.tool_confirmation') continue;
    const conf = findEvent(run, p.id);
    if (!conf || conf.type !== 'user.tool_confirmation') continue;
    const use = findEvent(run, conf.tool_use_id);
    if (!use || use.type !== 'agent.tool_use') continue;
    const now = run.catalog.evaluate(use.name);
    if (conf.result === 'allow' && now.kind === 'deny') {
      run.emit([{ type: 'agent.tool_result', tool_use_id: use.id, content: [{ type: 'text', text: `not run: ${now.why} (it changed after the confirmation was asked)` }], is_error: true }]);
    } else if (conf.result === 'allow') {
      await runTool(run, use);
    } else {
      const why = conf.deny_message ? `the user denied this tool call: ${conf.deny_message}` : 'the user denied this tool call';
      run.emit([{ type: 'agent.tool_result', tool_use_id: use.id, content: [{ type: 'text', text: why }], is_error: true }]);
    }
  }
}

/**
 * Answers that arrive while the run settles the first ones (a second
 * confirmation a moment later) are taken into this run too, before anything
 * asks the model. Returns the tool uses still waiting for an answer.
 */
async function settleLateAnswers(run: RunState): Promise<string[]> {
  for (;;) {
    const s = run.rt.store.snapshot(run.sessionId, { persist: false });
    const late = s.pending_events.filter((p) => p.type === 'user.tool_confirmation' || p.type === 'user.custom_tool_result');
    if (late.length === 0 || run.controller.signal.aborted) {
      return s.open_tool_uses.filter((u) => u.kind === 'custom' || u.permission === 'ask').map((u) => u.id);
    }
    run.emit([{ type: 'session.status_running', wake_id: run.runId, trigger: run.trigger, processed_event_ids: late.map((p) => p.id), continuation: true }]);
    await settleAnswers(run, late);
  }
}

/** An interrupt's effects: every open tool use closed as an error, every queued revisit cancelled. Idempotent. */
export function closeForInterrupt(store: Runtime['store'], sessionId: string, emit: (events: NewEvent[]) => unknown) {
  const s = store.snapshot(sessionId, { persist: false });
  if (s.open_tool_uses.length) {
    emit(s.open_tool_uses.map((u) => ({ type: 'agent.tool_result' as const, tool_use_id: u.id, content: [{ type: 'text' as const, text: 'interrupted by the user before completion' }], is_error: true })));
  }
  store.settleWakes(sessionId, 'wake.cancelled', s.pending_wakes.map((w) => w.id), { reason: 'user.interrupt' });
}

function applyInterrupt(run: RunState) {
  closeForInterrupt(run.rt.store, run.sessionId, (events) => run.emit(events));
}

/** After an in-flight abort by an interrupt: take the interrupt in, close the turn. */
function finishInterrupt(run: RunState): Ending {
  const s = run.rt.store.snapshot(run.sessionId, { persist: false });
  const interrupts = s.pending_events.filter((p) => p.type === 'user.interrupt');
  applyInterrupt(run);
  if (interrupts.length) {
    run.emit([{ type: 'session.status_running', wake_id: run.runId, trigger: run.trigger, processed_event_ids: interrupts.map((p) => p.id), continuation: true }]);
  }
  return { kind: 'idle', stop: { type: 'end_turn' } };
}

/** Retries of one revisit after terminal failures; then it is given up, with an error saying so. */
export const MAX_WAKE_ATTEMPTS = 10;

/**
 * SPEC §5: a wake consumed by a run that then failed is scheduled again
 * (`retry_of`), with a backoff that grows with its own attempt count (2 s
 * doubling to 5 min), up to MAX_WAKE_ATTEMPTS; giving up is recorded.
 */
function retryWakes(run: RunState, plan: RunPlan) {
  for (const w of plan.wakes) {
    const attempt = w.attempt + 1;
    if (attempt > MAX_WAKE_ATTEMPTS) {
      appendError(run, { type: 'unknown_error', code: 'wake_abandoned', message: `gave up the revisit "${w.reason}" (${w.retry_of ?? w.id}) after ${MAX_WAKE_ATTEMPTS} failed attempts`, retry: 'exhausted' });
      continue;
    }
    const at = iso(run.rt.deps.clock.now() + backoffMs(attempt - 1, run.rt.deps.random));
    run.rt.store.scheduleWake(run.sessionId, { due_at: at, reason: w.reason, source: 'retry', retry_of: w.retry_of ?? w.id, attempt, wake_run_id: run.runId });
  }
}

function writeStartFiles(run: RunState, skillProblems: string[]) {
  const { env, environment, catalog, files, startSnapshot: s } = run;
  files.json('environment.json', {
    environment_id: environment.id,
    sandbox_requested: environment.def.sandbox,
    isolation: env.posture?.isolation ?? 'unavailable',
    network: environment.def.network,
    network_closed: env.posture?.network_closed ?? false,
    filesystem_confined: env.posture?.filesystem_confined ?? false,
    reason: env.posture?.reason ?? env.sandboxError,
    shell_home: env.homeDir,
    shell: environment.def.shell,
    missing_mounts: env.missingMounts,
    skill_problems: skillProblems,
  });
  files.json('tools.json', catalog.entries.map((e) => ({ name: e.name, kind: e.kind, permission: e.permission, offered: e.permission !== 'disabled', description: e.definition.description, input_schema: e.definition.input_schema })));
  files.json('permissions.json', Object.fromEntries(catalog.entries.map((e) => [e.name, e.permission])));
  files.json('resources.json', { mounts: env.mounts.map((m) => ({ target: m.target, mode: m.writable ? 'rw' : 'ro', source: rel(run.rt.home, m.host) })) });
  files.json('vaults.json', { secrets: env.secretNames, missing: env.missingSecrets });
  files.json('relations.json', { session_id: run.sessionId, parent_session_id: s.parent_session_id, children: [] });
  files.json('outcome.json', { outcome: null, note: 'no outcome has been defined for this session' });
  files.ensureSummary();
}
