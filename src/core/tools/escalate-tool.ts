/**
 * The built-in `escalate` tool (docs/context.md, "Escalation"): the agent
 * puts a decision to a person. It is not run like the other built-ins: the
 * tool policy (run/escalation-policy.ts) files a call as a custom tool use,
 * so the session pauses on requires_action until `openboa resolve` answers
 * it. Two calls do run here: one whose input is invalid (its result is the
 * error, the session goes on) and one the agent's `escalation.
 * auto_resolve_above` resolves to its recommendation, recorded as such.
 * The wording of every answer is here, so the model reads the same
 * sentences however its escalation was resolved.
 */
import { EscalateInput } from '../schema/index.js';
import { fail, ok, type Tool } from './tool.js';

export const ESCALATE_DESCRIPTION =
  'Ask a person to decide: describe the situation, list the options you see (at least 2), say how confident you are (0 to 1) and, if you have one, which option you recommend (its number, 1-based). The session pauses until a person answers; the answer names the option chosen or carries their message. Use it when you are stuck, when the choice is not yours to make, or when going on could do harm.';

/** The answer when a person picks option `pick` (1-based). */
export function pickedAnswer(input: EscalateInput, pick: number): string {
  return `The person chose option ${pick}: ${input.options[pick - 1]}`;
}

/** The answer when a person writes their own. */
export function messageAnswer(message: string): string {
  return `The person answered: ${message}`;
}

/** The answer of an escalation resolved to its recommendation, with no person asked. */
export function autoResolvedAnswer(input: EscalateInput): string {
  const n = input.recommendation as number;
  return `Resolved automatically to your recommendation, option ${n}: ${input.options[n - 1]} (your confidence ${input.confidence} is above this agent's escalation.auto_resolve_above; no person was asked).`;
}

/** Whether an escalation resolves itself under `threshold` (escalation.auto_resolve_above). */
export function autoResolves(input: EscalateInput, threshold: number | null): boolean {
  return threshold !== null && input.recommendation !== undefined && input.confidence > threshold;
}

export const escalateTool: Tool<typeof EscalateInput> = {
  name: 'escalate',
  description: ESCALATE_DESCRIPTION,
  input: EscalateInput,
  async run(input) {
    // The policy lets a valid escalation run only when it resolves itself (so it has a recommendation).
    if (input.recommendation === undefined) return fail('escalate needs a person to answer; it was not filed as a question (the tool policy did not pause for it)');
    return ok(autoResolvedAnswer(input));
  },
};
