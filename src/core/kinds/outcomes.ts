/**
 * Outcomes' events (docs/outcomes.md): a person's user.define_outcome, and
 * the run's evaluation spans. The fold's part is store/outcome-fold.ts; the
 * words the agent reads are here, each a pure function of its event.
 */
import { AUTO_CHECK_PATH, DEFAULT_MAX_ITERATIONS, outcomeIdOf } from '../schema/outcomes.js';
import { addUsage } from '../store/add-usage.js';
import { defineOutcome, endEvaluation, judgeDefineOutcome, startEvaluation, takeInOutcomes } from '../store/outcome-fold.js';
import { capability, type EventOf } from './event-kind.js';

/** How a define_outcome reads to the agent: the task, the rubric, how it is checked, when it is graded. */
export function outcomeBrief(e: EventOf<'user.define_outcome'>): string {
  const max = e.max_iterations ?? DEFAULT_MAX_ITERATIONS;
  const parts = [`[outcome ${outcomeIdOf(e.id)} defined] ${e.description}`];
  if (e.rubric) parts.push(`Rubric:\n${e.rubric.content}`);
  if (e.check) parts.push('command' in e.check ? `Check: \`${e.check.command}\` is run in a fresh shell at /workspace; exit 0 means the outcome is met.` : `Check: ${AUTO_CHECK_PATH} is run in a fresh shell at /workspace (when it exists); exit 0 means the outcome is met.`);
  if (e.files?.length) parts.push(`The grader reads these files: ${e.files.join(', ')}.`);
  parts.push(`When you end your turn, your work is evaluated (at most ${max} evaluation${max === 1 ? '' : 's'}); a grader that sees only your final message${e.files?.length ? ' and those files' : ''} judges it${e.check ? ' after the check' : ''}.`);
  return parts.join('\n');
}

/** The user turn an evaluation's end gives the agent, or null when it asks nothing of it. */
export function evaluationNote(e: EventOf<'span.outcome_evaluation_end'>): string | null {
  const head = `[outcome ${e.outcome_id}, evaluation ${e.iteration + 1}: ${e.result}]`;
  if (e.result === 'needs_revision') return `${head}\n${e.explanation}\nRevise your work; it is evaluated again when you end your turn.`;
  if (e.result === 'max_iterations_reached') return `${head}\n${e.explanation}\nNo evaluations are left. Say briefly where the work stands; the session then goes idle.`;
  return null;
}

export const outcomes = capability({
  name: 'outcomes',
  kinds: {
    'user.define_outcome': {
      fold: { judge: judgeDefineOutcome, accepted: defineOutcome },
      conversation: { takenIn: outcomeBrief, carriesContent: true },
      midRun: true,
    },
    'span.outcome_evaluation_start': { fold: { apply: startEvaluation } },
    'span.outcome_evaluation_end': {
      fold: {
        apply(s, e) {
          // The grader's tokens are the session's too (its budget counts them).
          addUsage(s, e.usage, e.model_requests ?? 0, e.cost_usd);
          endEvaluation(s, e);
        },
      },
      conversation: {
        // What the agent must act on enters as its next user turn; a satisfied, failed or interrupted
        // outcome asks nothing of it (the run goes idle), so it adds nothing to answer.
        enter(sink, e) {
          const note = evaluationNote(e);
          if (note) sink.userText(note, { closesTurn: true });
        },
      },
    },
  },
  takeIn: takeInOutcomes,
});
