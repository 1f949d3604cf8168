/**
 * The one rule for answers: when a person's or program's answer to a tool
 * use (a `user.tool_confirmation`, a `user.custom_tool_result`) is taken.
 * The fold refuses a line that breaks it (fold.ts), the commands that write
 * answers check it before they write (session-ops.ts), and "what waits on a
 * person" (openActions) is the set of tool uses it would take an answer for,
 * so the three cannot drift apart.
 */
import type { OpenToolUse, SessionEvent, SessionSnapshot } from '../schema/index.js';

/** 'tool': a confirmation of a built-in tool use; 'custom': the result of a custom tool use. */
export type AnswerKind = 'tool' | 'custom';

/** Why an answer cannot be taken now. */
export type AnswerProblem =
  | { kind: 'not_open' }
  | { kind: 'wrong_kind'; use: OpenToolUse }
  | { kind: 'did_not_ask'; use: OpenToolUse }
  | { kind: 'answered'; use: OpenToolUse; by: string };

/** Whether events of this type answer a tool use (a confirmation or a custom tool result). */
export function isAnswerType(type: string): type is 'user.tool_confirmation' | 'user.custom_tool_result' {
  return type === 'user.tool_confirmation' || type === 'user.custom_tool_result';
}

/** The tool use a user event answers and the kind of its answer; null for an event that answers nothing. */
export function answerTarget(e: SessionEvent): { kind: AnswerKind; useId: string } | null {
  if (e.type === 'user.tool_confirmation') return { kind: 'tool', useId: e.tool_use_id };
  if (e.type === 'user.custom_tool_result') return { kind: 'custom', useId: e.custom_tool_use_id };
  return null;
}

/** The rule for one open tool use: an answer of `kind` is taken only if it is of the use's kind, the use asked (for a confirmation), and no answer came yet. */
function useProblem(use: OpenToolUse, kind: AnswerKind): AnswerProblem | null {
  if (use.kind !== kind) return { kind: 'wrong_kind', use };
  if (kind === 'tool' && use.permission !== 'ask') return { kind: 'did_not_ask', use };
  if (use.answered_by) return { kind: 'answered', use, by: use.answered_by };
  return null;
}

/**
 * Why an answer of `kind` to the tool use `useId` cannot be taken in state
 * `s`, or null when it can: the use must be open (no result yet), and pass
 * the rule above.
 */
export function answerProblem(s: Pick<SessionSnapshot, 'open_tool_uses'>, kind: AnswerKind, useId: string): AnswerProblem | null {
  const use = s.open_tool_uses.find((u) => u.id === useId);
  return use ? useProblem(use, kind) : { kind: 'not_open' };
}

/** Tool uses the session waits on a person or program for: those that would take an answer now. */
export function openActions(s: Pick<SessionSnapshot, 'open_tool_uses'>): OpenToolUse[] {
  return s.open_tool_uses.filter((u) => useProblem(u, u.kind) === null);
}

/**
 * The problem in the log's words (a `session.error` reporting the line):
 * where it is, what it answers, and why it is refused.
 */
export function describeAnswerProblem(p: AnswerProblem, at: { line: number; type: string }, kind: AnswerKind, useId: string): string {
  const where = `events.jsonl line ${at.line}: ${at.type}:`;
  const tool = kind === 'tool';
  switch (p.kind) {
    case 'not_open':
      return tool
        ? `${where} tool_use_id ${useId} is not a tool use awaiting an answer (unknown, or already has a result)`
        : `${where} custom_tool_use_id ${useId} is not a custom tool use awaiting a result (unknown, or already answered)`;
    case 'wrong_kind':
      return tool ? `${where} ${useId} is a custom tool use; answer it with user.custom_tool_result` : `${where} ${useId} is a built-in tool use; answer it with user.tool_confirmation`;
    case 'did_not_ask':
      return `${where} ${useId} did not ask for confirmation`;
    case 'answered':
      return `${where} ${useId} was already answered by ${p.by}`;
  }
}
