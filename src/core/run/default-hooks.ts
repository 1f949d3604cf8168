/**
 * The hooks every run gets today, and the small ones that have no module of
 * their own yet: mid-run steering, the empty-reply guard (after-turn) and
 * the retry of revisits a failed run had taken in (after-run). A new
 * capability adds its hook to the list defaultHooks() returns; the loop does
 * not change.
 */
import { previewPublisher } from './preview-publisher.js';
import { iso } from '../foundation/clock.js';
import type { ModelProvider } from '../model/provider.js';
import type { PendingWake } from '../schema/index.js';
import { backoffMs } from './backoff.js';
import { compactingContext } from './compacting-context.js';
import { failureGuards, guardedToolPolicy } from './failure-guards.js';
import { createdAtOf } from './plan.js';
import { takenMidRun } from '../kinds/index.js';
import { gradeOutcomes, liveOutcomeFile } from './outcome-grading.js';
import { correctionsFromDenials, learningsSection } from './learnings-run.js';
import { memoryRecorder, memorySection, memoryVersions } from './memory-run.js';
import { instructionsSection, runtimeSection, skillsSection } from './system-prompt.js';
import { stopWhenPaused } from './pause-steering.js';
import { relationsAtRunEnd } from './relations-file.js';
import { usageFile } from './usage-file.js';
import { planFile, planStartFile } from './plan-file.js';
import type { AfterRunHook, AfterTurnHook, Bound, LoopHooks, RunService, SessionPreparer, Steering } from './loop-hooks.js';
import { bornInterrupted } from './interrupt-from-above.js';
import { reconcileHeartbeat } from './heartbeat.js';
import { mcpService } from '../mcp/mcp-service.js';
import { egressService } from '../egress/egress-service.js';
import { packagesReady, packagesService } from '../packages/packages-service.js';
import { outcomeStartFile } from './outcome-grading.js';
import { relationsStartFile } from './relations-file.js';
import { treeBudget } from './tree-budget.js';
import { spendBudget } from './spend-budget.js';
import { childReport } from './child-report.js';
import { apiAccess } from './api-access.js';
import type { RunContext } from './run-context.js';
import { telemetryObservers } from '../telemetry/telemetry.js';
import { inboxWatch, takeInboxFirst } from './inbox-during-run.js';

/** Empty replies in a row that end the run. */
export const EMPTY_STOP = 3;

/** Retries of one revisit after terminal failures; then it is given up, with an error saying so. */
export const MAX_WAKE_ATTEMPTS = 10;

/**
 * Mid-run steering: user messages, and the user events a capability takes
 * in mid-run (kinds/index.ts: outcomes, children's reports), appended during the run
 * are taken into it at the next model request, listed in a continuation
 * session.status_running (so they enter the conversation there, once). An
 * interrupt appended during the run stops it, daemon or not.
 */
export function takeMidRunInput(): Steering {
  return {
    poll(ctx, journal) {
      const s = ctx.rt.store.snapshot(ctx.sessionId, { persist: false });
      if (s.pending_events.some((p) => p.type === 'user.interrupt')) {
        ctx.control.abort({ kind: 'interrupt' });
        return s;
      }
      const take = s.pending_events.filter((p) => takenMidRun(p.type));
      if (take.length === 0) return s;
      journal.emit([{ type: 'session.status_running', wake_id: ctx.runId, trigger: ctx.trigger, processed_event_ids: take.map((p) => p.id), ...createdAtOf(take), continuation: true }]);
      // The window reads no further than the fold: fold the record that takes them in.
      return ctx.rt.store.snapshot(ctx.sessionId, { persist: false });
    },
  };
}

/** The run's request limit (limits.max_model_requests_per_wake). */
export function requestCap(): Bound {
  return {
    check(ctx, journal) {
      const max = ctx.agent.def.limits.max_model_requests_per_wake;
      if (journal.usage.model_requests < max) return null;
      journal.error({ type: 'tool_use_limit_reached_error', code: 'max_model_requests_per_wake', message: `the run made ${journal.usage.model_requests} model requests, the limit (max_model_requests_per_wake); send a message to go on`, retry: 'exhausted' });
      return { kind: 'idle', stop: { type: 'retries_exhausted' } };
    },
  };
}

/** Asks again after an empty reply; EMPTY_STOP of them in a row end the run. */
export function emptyReplyGuard(): AfterTurnHook {
  let inARow = 0;
  return {
    afterTurn(_ctx, journal, turn) {
      if (!turn?.empty) {
        inARow = 0;
        return undefined;
      }
      inARow += 1;
      if (inARow < EMPTY_STOP) return undefined;
      journal.error({ code: 'empty_replies', message: `the model gave ${inARow} empty replies in a row; the run stops here (send a message to go on)`, retry: 'exhausted' });
      return { end: { kind: 'idle', stop: { type: 'retries_exhausted' } } };
    },
  };
}

/**
 * SPEC §5: a revisit taken in by a run that then failed for good is
 * scheduled again (`retry_of`), with a backoff that grows with its own
 * attempt count, up to MAX_WAKE_ATTEMPTS; giving up is recorded. Written
 * before the run's ending, so a crash right after it cannot lose them. A
 * firing of a recurring revisit is not retried: its next firing comes anyway.
 */
export function retryRevisits(wakes: readonly PendingWake[]): AfterRunHook {
  return {
    afterRun(ctx, journal, ending) {
      if (ending.kind !== 'idle' || !ending.terminalError) return ending;
      // A recurring revisit's next firing is its retry.
      for (const w of wakes.filter((x) => x.recurrence === null)) {
        const attempt = w.attempt + 1;
        if (attempt > MAX_WAKE_ATTEMPTS) {
          journal.error({ code: 'wake_abandoned', message: `gave up the revisit "${w.reason}" (${w.retry_of ?? w.id}) after ${MAX_WAKE_ATTEMPTS} failed attempts`, retry: 'exhausted' });
          continue;
        }
        const at = iso(ctx.rt.deps.clock.now() + backoffMs(attempt - 1, ctx.rt.deps.random));
        journal.scheduleWake({ due_at: at, reason: w.reason, source: 'retry', retry_of: w.retry_of ?? w.id, attempt, wake_run_id: ctx.runId });
      }
      return ending;
    },
  };
}

/** What prepares a session before its run is planned (loop-hooks.ts, SessionPreparer): the heartbeat of agent.yaml in its queue. */
export const defaultPreparers: readonly SessionPreparer[] = [reconcileHeartbeat];

/**
 * The services of a run, fresh for each: MCP servers, the egress proxy of
 * a network: limited sandbox, the environment's packages, the memory
 * versions around the sandbox, the runtime/ files outcomes, delegation
 * and the plan keep, the API's run token, and the look at inbox/ between
 * steps (inbox-during-run.ts).
 */
export function defaultServices(): RunService[] {
  return [mcpService(), egressService(), packagesService(), memoryVersions(), outcomeStartFile(), relationsStartFile(), planStartFile(), apiAccess(), inboxWatch()];
}

/** The hooks of a run: the model, fit-and-digest, the catalog's permissions with the repeat guard, steering, the guards (a failed package build first), outcomes. */
export function defaultHooks(ctx: RunContext, model: ModelProvider, takenWakes: readonly PendingWake[], services: readonly RunService[]): LoopHooks {
  const outcomes = gradeOutcomes(model);
  const memory = memoryRecorder();
  const plan = planFile();
  const spend = spendBudget();
  return {
    model,
    context: compactingContext(model),
    tools: guardedToolPolicy(ctx),
    steering: takeInboxFirst(liveOutcomeFile(stopWhenPaused(takeMidRunInput()))),
    bounds: [packagesReady(), spend, treeBudget(), requestCap()],
    afterTurn: [emptyReplyGuard(), ...failureGuards(ctx), outcomes, memory, plan],
    afterRun: [retryRevisits(takenWakes), outcomes, relationsAtRunEnd(), usageFile(), plan, correctionsFromDenials(), memory, spend],
    afterClose: [childReport()],
    promptSections: [instructionsSection, skillsSection, memorySection, learningsSection, runtimeSection],
    observers: [previewPublisher(), ...telemetryObservers(ctx.rt.deps.telemetry)],
    services,
    gates: [bornInterrupted()],
  };
}
