/**
 * The outcome part of the fold (docs/outcomes.md): where each outcome's
 * loop stands, read from the log alone, so a restarted daemon (or any
 * reader) knows whether the agent is working, an evaluation is in progress
 * or the outcome is over.
 *
 *   user.define_outcome            → pending (its definition kept in pending_outcomes)
 *   status_running takes it in     → running; an outcome still open is replaced (interrupted)
 *   status_running takes in an interrupt → the open outcome ends interrupted
 *   span.outcome_evaluation_start  → evaluating (iteration i)
 *   span.outcome_evaluation_end    → needs_revision: running again (iteration i + 1);
 *                                    any other result: over
 *
 * Events are applied in log order, and a status_running's taken-in events in
 * the order of their lines, so the same log always gives the same state.
 */
import type { SessionEvent, SessionSnapshot } from '../schema/index.js';
import { DEFAULT_MAX_ITERATIONS, MAX_ITERATIONS, outcomeIdOf, type EvaluationResult, type OpenOutcome, type OutcomeEvaluation } from '../schema/outcomes.js';

/** Outcomes kept in outcome_evaluations (the newest); older ones are in the log. */
export const MAX_OUTCOMES_KEPT = 100;
/** Characters of an explanation kept in session.json (the whole is in the log). */
const EXPLANATION_KEPT = 4000;

type Define = Extract<SessionEvent, { type: 'user.define_outcome' }>;
type EvalStart = Extract<SessionEvent, { type: 'span.outcome_evaluation_start' }>;
type EvalEnd = Extract<SessionEvent, { type: 'span.outcome_evaluation_end' }>;

const clip = (t: string) => (t.length > EXPLANATION_KEPT ? `${t.slice(0, EXPLANATION_KEPT - 1)}…` : t);

/** Outcomes defined and not yet taken in whose definitions are kept; an older one is replaced before it starts. */
export const MAX_PENDING_OUTCOMES = 8;

/** Why a define_outcome line cannot be accepted in this state, or null. */
export function judgeDefineOutcome(s: SessionSnapshot, e: Define, line: number): string | null {
  const want = outcomeIdOf(e.id);
  if (e.outcome_id !== undefined && e.outcome_id !== want) {
    return `events.jsonl line ${line}: user.define_outcome: outcome_id ${JSON.stringify(e.outcome_id)} is assigned by the runtime (this event's is ${want}); leave it out`;
  }
  if (entryOf(s, want)) return `events.jsonl line ${line}: user.define_outcome: id ${e.id} was already used by an outcome (${want}); give each line its own id, or none`;
  return null;
}

function entryOf(s: SessionSnapshot, outcomeId: string): OutcomeEvaluation | undefined {
  for (let i = s.outcome_evaluations.length - 1; i >= 0; i--) if (s.outcome_evaluations[i]!.outcome_id === outcomeId) return s.outcome_evaluations[i];
  return undefined;
}

/** A define_outcome line accepted as pending. */
export function defineOutcome(s: SessionSnapshot, e: Define): void {
  const o: OpenOutcome = {
    outcome_id: outcomeIdOf(e.id),
    event_id: e.id,
    description: e.description,
    rubric: e.rubric?.content ?? null,
    check: e.check ?? null,
    files: e.files ?? [],
    max_iterations: Math.min(MAX_ITERATIONS, e.max_iterations ?? DEFAULT_MAX_ITERATIONS),
    state: 'pending',
    iteration: 0,
    evaluation_start_id: null,
    iterations: [],
  };
  s.pending_outcomes = [...s.pending_outcomes, o];
  s.outcome_evaluations = [...s.outcome_evaluations, { outcome_id: o.outcome_id, description: clip(o.description), iteration: 0, result: 'pending' as const, explanation: null, completed_at: null }].slice(-MAX_OUTCOMES_KEPT);
  // A burst of definitions before any run: only the newest can become the open outcome, so the oldest are replaced now.
  while (s.pending_outcomes.length > MAX_PENDING_OUTCOMES) {
    const old = s.pending_outcomes[0]!;
    s.pending_outcomes = s.pending_outcomes.slice(1);
    const entry = entryOf(s, old.outcome_id);
    if (entry) Object.assign(entry, { result: 'interrupted', explanation: `replaced by a newer outcome before a run took it in`, completed_at: e.created_at });
  }
}

/** Ends the open outcome without an evaluation of its own (replaced, interrupted). */
function endOpen(s: SessionSnapshot, explanation: string, at: string): void {
  const o = s.outcome;
  if (!o) return;
  const entry = entryOf(s, o.outcome_id);
  if (entry) Object.assign(entry, { result: 'interrupted', explanation, completed_at: at });
  s.outcome = null;
}

/**
 * A status_running took these user events in (the pending ones, in line
 * order): outcomes start, an interrupt ends the open one.
 */
export function takeInOutcomes(s: SessionSnapshot, taken: ReadonlyArray<{ id: string; type: string }>, at: string): void {
  for (const p of taken) {
    if (p.type === 'user.interrupt') {
      endOpen(s, 'interrupted by the user', at);
      continue;
    }
    if (p.type !== 'user.define_outcome') continue;
    const def = s.pending_outcomes.find((o) => o.event_id === p.id);
    if (!def) continue;
    s.pending_outcomes = s.pending_outcomes.filter((o) => o !== def);
    endOpen(s, `replaced by ${def.outcome_id}`, at);
    s.outcome = { ...def, state: 'running' };
    const entry = entryOf(s, def.outcome_id);
    if (entry) entry.result = 'running';
  }
}

export function startEvaluation(s: SessionSnapshot, e: EvalStart): void {
  const o = s.outcome;
  if (!o || o.outcome_id !== e.outcome_id) return; // an outcome already over: nothing to track
  s.outcome = { ...o, state: 'evaluating', iteration: e.iteration, evaluation_start_id: e.id };
  const entry = entryOf(s, o.outcome_id);
  if (entry) Object.assign(entry, { result: 'evaluating', iteration: e.iteration });
}

export function endEvaluation(s: SessionSnapshot, e: EvalEnd): void {
  const o = s.outcome;
  if (!o || o.outcome_id !== e.outcome_id) return;
  const record = { iteration: e.iteration, result: e.result, explanation: clip(e.explanation), evaluation_start_id: e.outcome_evaluation_start_id, at: e.created_at };
  const iterations = [...o.iterations, record].slice(-MAX_ITERATIONS);
  const entry = entryOf(s, o.outcome_id);
  if (e.result === 'needs_revision') {
    s.outcome = { ...o, state: 'running', iteration: e.iteration + 1, evaluation_start_id: null, iterations };
    if (entry) Object.assign(entry, { result: 'running', iteration: e.iteration, explanation: record.explanation });
    return;
  }
  s.outcome = null;
  if (entry) Object.assign(entry, { result: e.result satisfies EvaluationResult, iteration: e.iteration, explanation: record.explanation, completed_at: e.created_at });
}
