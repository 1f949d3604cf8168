/**
 * Outcomes, as hooks of the loop (docs/outcomes.md): when the agent's turn
 * ends with an outcome open, grade it, and let the verdict decide what the
 * run does next.
 *
 *   span.outcome_evaluation_start {outcome_id, iteration}
 *     check grader → rubric grader (graders.ts); heartbeats every HEARTBEAT_MS
 *   span.outcome_evaluation_end {result, explanation, usage}
 *     needs_revision          → the explanation is the agent's next user turn; the run goes on
 *     max_iterations_reached  → the same, once, to acknowledge; then idle
 *     satisfied | failed      → idle (end_turn)
 *     interrupted             → the run ends as an interrupt
 *
 * Grading begins by ending the agent's shell and everything it left
 * running: no background job of the agent's can change the workspace
 * between the check and the rubric grader's reads.
 *
 * The log says where the loop stands (store/outcome-fold.ts), so nothing
 * is kept here between runs: a run that died after the agent's last reply
 * finds the turn over (the loop asks the after-turn hooks with no turn) and
 * grades it; one that died between an evaluation's start and end grades
 * again under the same start, so each iteration gets exactly one end. A
 * grader's model error is a failed attempt like any model error: the run
 * is rescheduled and the evaluation, still open, is done by the retry.
 *
 * When the run has no model request left for the revision, a revisit due
 * now carries it into a follow-up run the daemon picks up.
 */
import { iso } from '../foundation/clock.js';
import { ZERO_USAGE, type ModelUsage, type NewEvent, type OpenOutcome, type SessionEvent, type SessionSnapshot } from '../schema/index.js';
import type { ModelProvider } from '../model/provider.js';
import { cutHead } from '../foundation/text-cut.js';
import type { AfterRunHook, AfterTurnHook, RunService, Steering, Turn, TurnVerdict } from './loop-hooks.js';
import { endingForAbort } from './loop.js';
import type { RunJournal } from './journal.js';
import type { RunContext } from './run-context.js';
import { graderModel, runCheck, runRubric } from './graders.js';
import { requestCost } from '../definitions/pricing.js';
import { nudgedLast } from './guard-log.js';

/** At most this long between two signs of life of an evaluation (span.outcome_evaluation_ongoing). */
export const HEARTBEAT_MS = 10_000;
/** Characters of an explanation written to the log. */
export const MAX_EXPLANATION_CHARS = 8000;
/**
 * Grader replies without a verdict (grader_no_verdict) one evaluation takes
 * at most: each is a paid request, retried with backoff like any failed
 * attempt; the last ends the evaluation `failed` instead, with the reason.
 */
export const GRADER_NO_VERDICT_TRIES = 3;

type Result = Extract<NewEvent, { type: 'span.outcome_evaluation_end' }>['result'];

/** The outcome hooks of a run: grading after the agent's turn, runtime/outcome.json after the run. */
export function gradeOutcomes(model: ModelProvider): AfterTurnHook & AfterRunHook {
  return {
    async afterTurn(ctx, journal, turn, snap) {
      // Only a turn that is over is graded: tools ran (the model is asked again), a person is asked, or nothing was said.
      if (turn && (turn.uses.length > 0 || turn.asks.length > 0 || turn.empty)) return undefined;
      if (nudgedLast(journal)) return undefined; // a guard asks the model again first: the turn is not over
      const o = snap.outcome;
      if (!o) return undefined;
      return evaluate(ctx, journal, model, o, finalMessages(ctx, snap, turn));
    },
    afterRun(ctx, _journal, ending, snap) {
      writeOutcomeFile(ctx, snap);
      return ending;
    },
  };
}

async function evaluate(ctx: RunContext, journal: RunJournal, model: ModelProvider, o: OpenOutcome, finals: string[]): Promise<TurnVerdict> {
  // The turn is over: end the agent's shell and everything it left running, so nothing of the agent's
  // acts on the workspace while the graders look at it (its cwd is kept; a later command starts a new shell).
  ctx.sandbox.close();
  let startId = o.state === 'evaluating' ? o.evaluation_start_id : null;
  if (!startId) {
    const [start] = journal.emit([{ type: 'span.outcome_evaluation_start', outcome_id: o.outcome_id, iteration: o.iteration }]);
    startId = (start as SessionEvent | undefined)?.id ?? null;
    if (!startId) return { end: endingForAbort(ctx, journal) ?? { kind: 'lease_lost' } }; // silenced: another process owns the log
    writeOutcomeFile(ctx, ctx.rt.store.snapshot(ctx.sessionId, { persist: false }));
  }
  const stopBeat = heartbeat(ctx, journal, o);
  const requestsBefore = journal.usage.model_requests;
  let verdict: { result: Result; explanation: string; usage: ModelUsage } | { halt: TurnVerdict };
  try {
    verdict = await grade(ctx, journal, model, o, finals);
  } finally {
    stopBeat();
  }
  if ('halt' in verdict) return verdict.halt;
  let { result } = verdict;
  if (result === 'needs_revision' && o.iteration + 1 >= o.max_iterations) result = 'max_iterations_reached';
  journal.emit([
    {
      type: 'span.outcome_evaluation_end',
      outcome_evaluation_start_id: startId,
      outcome_id: o.outcome_id,
      iteration: o.iteration,
      result,
      // Redacted before it is cut, so a secret cannot survive in halves at the cut.
      explanation: cutHead(ctx.env.redactor.text(verdict.explanation), MAX_EXPLANATION_CHARS),
      usage: verdict.usage,
      model_requests: journal.usage.model_requests - requestsBefore,
      cost_usd: requestCost(ctx.agent.def, graderModel(ctx.agent.def), verdict.usage),
    },
  ]);
  journal.addUsage(verdict.usage);
  writeOutcomeFile(ctx, ctx.rt.store.snapshot(ctx.sessionId, { persist: false }));
  if (result === 'interrupted') return { end: { kind: 'interrupted' } };
  if (result !== 'needs_revision' && result !== 'max_iterations_reached') return undefined; // satisfied, failed: the turn ends
  // The explanation is now the agent's next user turn: ask the model again, here or in a follow-up run.
  if (journal.usage.model_requests < ctx.agent.def.limits.max_model_requests_per_wake) return { continue: true };
  journal.scheduleWake({ due_at: iso(ctx.rt.deps.clock.now()), reason: `outcome ${o.outcome_id}: evaluation ${o.iteration + 1} was ${result}; this run had no model request left (max_model_requests_per_wake), so the work goes on here`, source: 'daemon', wake_run_id: ctx.runId });
  return { end: { kind: 'idle', stop: { type: 'end_turn' } } };
}

/**
 * The graders in order. A check that fails decides (needs_revision); one
 * that passes decides alone when there is no rubric; otherwise the rubric
 * grader decides, told how the check went. `halt` ends the run without an
 * evaluation end (a shutdown, a lost lease, a grader's model error): the
 * evaluation stays open for the run that follows.
 */
async function grade(ctx: RunContext, journal: RunJournal, model: ModelProvider, o: OpenOutcome, finals: string[]): Promise<{ result: Result; explanation: string; usage: ModelUsage } | { halt: TurnVerdict }> {
  const signal = ctx.control.signal;
  const interrupted = () => ({ result: 'interrupted' as const, explanation: 'interrupted by the user during the evaluation', usage: ZERO_USAGE });
  const stopped = () => {
    const why = ctx.control.reason();
    if (why?.kind === 'interrupt') return interrupted();
    return { halt: { end: endingForAbort(ctx, journal) ?? { kind: 'lease_lost' as const } } };
  };
  let checkNote: string | null = null;
  if (o.check) {
    const c = await runCheck(ctx, o, signal);
    if (c.kind === 'interrupted' || signal.aborted) return stopped();
    if (c.kind === 'unavailable') return { result: 'failed', explanation: `${c.why}; the outcome cannot be checked here`, usage: ZERO_USAGE };
    if (c.kind === 'ran' && !c.passed) return { result: 'needs_revision', explanation: c.explanation, usage: ZERO_USAGE };
    if (c.kind === 'ran' && o.rubric === null) return { result: 'satisfied', explanation: c.explanation, usage: ZERO_USAGE };
    checkNote = c.kind === 'ran' ? c.explanation : `No check ran: ${c.why}.`;
  }
  const r = await runRubric(ctx, model, journal, o, finals, checkNote, signal);
  if (r.kind === 'error') {
    if (r.error.aborted || signal.aborted) return stopped();
    const f = { type: r.error.errorType, code: r.error.code, message: `grading ${o.outcome_id} (evaluation ${o.iteration + 1}): ${r.error.message}` };
    if (r.error.code === 'grader_no_verdict') {
      const tries = noVerdictsSoFar(ctx, o) + 1;
      if (tries >= GRADER_NO_VERDICT_TRIES) {
        journal.error({ ...f, message: `${f.message} (try ${tries} of ${GRADER_NO_VERDICT_TRIES}: the evaluation ends failed)`, retry: 'terminal' });
        const explanation = `The grader gave no verdict in ${tries} tries (the last: ${r.error.message}), so this evaluation ends failed. Look at outcomes.grader_model (${graderModel(ctx.agent.def)}) and define the outcome again.`;
        return { result: 'failed', explanation, usage: r.usage };
      }
    }
    journal.addUsage(r.usage);
    if (r.error.retryable) return { halt: { end: journal.failedAttempt(ctx.rt, ctx.startSnapshot.consecutive_failures, f) } };
    journal.error({ ...f, retry: 'terminal' });
    return { halt: { end: { kind: 'idle', stop: { type: 'retries_exhausted' }, terminalError: true } } };
  }
  const explanation = checkNote && o.check ? `${checkNote}\n${r.explanation}` : r.explanation;
  return { result: r.result, explanation, usage: r.usage };
}

/**
 * The grader_no_verdict errors of the evaluation in progress so far: those
 * after its span.outcome_evaluation_start in the log (its retries run under
 * that start). Read from the run's window; a start older than the window
 * counts what the window holds, which errs toward one more try.
 */
function noVerdictsSoFar(ctx: RunContext, o: OpenOutcome): number {
  if (o.state !== 'evaluating' || !o.evaluation_start_id) return 0;
  ctx.window.refresh(ctx.rt.store.snapshot(ctx.sessionId, { persist: false }));
  const recent = ctx.window.recent;
  let n = 0;
  for (let i = recent.length - 1; i >= 0; i--) {
    const e = recent[i]!.event;
    if (e.id === o.evaluation_start_id) break;
    if (e.type === 'session.error' && e.error.code === 'grader_no_verdict') n += 1;
  }
  return n;
}

/** Appends span.outcome_evaluation_ongoing every HEARTBEAT_MS until stopped. */
function heartbeat(ctx: RunContext, journal: RunJournal, o: OpenOutcome): () => void {
  const clock = ctx.rt.deps.clock;
  let cancel: (() => void) | null = null;
  const arm = () => {
    cancel = clock.setTimer(HEARTBEAT_MS, () => {
      if (ctx.control.signal.aborted) return;
      journal.emit([{ type: 'span.outcome_evaluation_ongoing', outcome_id: o.outcome_id, iteration: o.iteration }]);
      arm();
    });
  };
  arm();
  return () => {
    cancel?.();
    cancel = null;
  };
}

/**
 * The agent's final message(s) of this iteration: the text of its last
 * reply (`turn`, or the log's newest when a run resumes an evaluation),
 * else its newest message before that.
 */
function finalMessages(ctx: RunContext, snap: SessionSnapshot, turn: Turn | null): string[] {
  const texts = (events: readonly SessionEvent[]) => events.flatMap((e) => (e.type === 'agent.message' ? [e.content.map((b) => b.text).join('')] : [])).filter((t) => t.trim() !== '');
  if (turn) {
    const said = texts(turn.written);
    if (said.length) return said;
  }
  ctx.window.refresh(snap);
  const recent = ctx.window.recent.map((l) => l.event);
  // The newest reply that said something: from its span's end back to its start.
  let end = -1;
  for (let i = recent.length - 1; i >= 0; i--) {
    if (recent[i]!.type === 'agent.message') {
      end = i;
      break;
    }
  }
  if (end < 0) return [];
  let start = end;
  while (start > 0 && recent[start - 1]!.type !== 'span.model_request_start') start -= 1;
  return texts(recent.slice(start, end + 1));
}

/**
 * Wraps the run's steering so runtime/outcome.json follows every change of
 * the outcomes the fold reports at a step: the run taking in a new outcome
 * (at its start or mid-run, replacing the open one), an evaluation's end,
 * a definition arriving. Compares the snapshot each poll returns anyway,
 * so a step where nothing changed writes nothing.
 */
export function liveOutcomeFile(inner: Steering): Steering {
  let written: string | null = null;
  return {
    poll(ctx, journal) {
      const s = inner.poll(ctx, journal);
      const key = JSON.stringify([s.outcome?.outcome_id, s.outcome?.state, s.outcome?.iteration, s.pending_outcomes.map((p) => p.outcome_id), s.outcome_evaluations.length]);
      if (key !== written) {
        writeOutcomeFile(ctx, s);
        written = key;
      }
      return s;
    },
  };
}

/** runtime/outcome.json: the open outcome, its evaluations so far, the last explanation, and the session's outcomes. */
export function writeOutcomeFile(ctx: RunContext, snap: SessionSnapshot): void {
  const o = snap.outcome;
  const last = o?.iterations[o.iterations.length - 1] ?? null;
  ctx.files.json('outcome.json', {
    outcome: o
      ? {
          outcome_id: o.outcome_id,
          description: o.description,
          state: o.state,
          iteration: o.iteration,
          max_iterations: o.max_iterations,
          check: o.check,
          rubric: o.rubric,
          files: o.files,
          iterations: o.iterations,
          last_explanation: last?.explanation ?? null,
        }
      : null,
    pending: snap.pending_outcomes.map((p) => ({ outcome_id: p.outcome_id, description: p.description })),
    outcome_evaluations: snap.outcome_evaluations.slice(-10),
    ...(o || snap.outcome_evaluations.length ? {} : { note: 'no outcome has been defined for this session' }),
  });
}

/** The run service that writes runtime/outcome.json as the run starts (the outcome it took in is the open one now, no longer pending). */
export function outcomeStartFile(): RunService {
  return { name: 'outcome file', startFiles: (ctx) => writeOutcomeFile(ctx, ctx.rt.store.snapshot(ctx.sessionId, { persist: false })) };
}
