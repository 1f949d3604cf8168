/**
 * The notes the runtime gives the agent as user turns, where their events
 * sit in the log: an outcome's brief, an evaluation's verdict, a context
 * warning. Each is a pure function of its event, so a conversation rebuilt
 * from the log says the same words.
 */
import type { SessionEvent } from '../schema/index.js';
import { AUTO_CHECK_PATH, DEFAULT_MAX_ITERATIONS, outcomeIdOf } from '../schema/outcomes.js';

/** How a define_outcome reads to the agent: the task, the rubric, how it is checked, when it is graded. */
export function outcomeBrief(e: Extract<SessionEvent, { type: 'user.define_outcome' }>): string {
  const max = e.max_iterations ?? DEFAULT_MAX_ITERATIONS;
  const parts = [`[outcome ${outcomeIdOf(e.id)} defined] ${e.description}`];
  if (e.rubric) parts.push(`Rubric:\n${e.rubric.content}`);
  if (e.check) parts.push('command' in e.check ? `Check: \`${e.check.command}\` is run in a fresh shell at /workspace; exit 0 means the outcome is met.` : `Check: ${AUTO_CHECK_PATH} is run in a fresh shell at /workspace (when it exists); exit 0 means the outcome is met.`);
  if (e.files?.length) parts.push(`The grader reads these files: ${e.files.join(', ')}.`);
  parts.push(`When you end your turn, your work is evaluated (at most ${max} evaluation${max === 1 ? '' : 's'}); a grader that sees only your final message${e.files?.length ? ' and those files' : ''} judges it${e.check ? ' after the check' : ''}.`);
  return parts.join('\n');
}

/** The note a threshold's context warning gives the agent, where its line sits; null for a cut's (the request marks a cut itself). */
export function contextWarningNote(e: Extract<SessionEvent, { type: 'session.context_warning' }>): string | null {
  if (e.threshold === undefined || e.silent) return null;
  const pct = Math.round(e.threshold * 100);
  return `[openboa: your context window is ${pct}% full (about ${e.tokens} of ${e.window} tokens). Older turns are summarized when it fills further; put anything that must survive word for word on a line marked [VITAL].]`;
}

/** The user turn an evaluation's end gives the agent, or null when it asks nothing of it. */
export function evaluationNote(e: Extract<SessionEvent, { type: 'span.outcome_evaluation_end' }>): string | null {
  const head = `[outcome ${e.outcome_id}, evaluation ${e.iteration + 1}: ${e.result}]`;
  if (e.result === 'needs_revision') return `${head}\n${e.explanation}\nRevise your work; it is evaluated again when you end your turn.`;
  if (e.result === 'max_iterations_reached') return `${head}\n${e.explanation}\nNo evaluations are left. Say briefly where the work stands; the session then goes idle.`;
  return null;
}

/** How a child's delivery reads to its parent: who it is from, and what it said or how its run ended. */
export function childNote(e: Extract<SessionEvent, { type: 'agent.thread_message_received' | 'session.thread_status_idle' }>): string {
  if (e.type === 'session.thread_status_idle') {
    const why = e.stop_reason.type === 'requires_action' ? 'requires_action: it waits for a person (openboa status on it lists what)' : e.stop_reason.type;
    return `[child session ${e.session_thread_id} (agent ${e.agent_name}) is idle: ${why}]`;
  }
  const text = e.content.map((b) => b.text).join('\n');
  const what = e.delivery_key.startsWith('msg:') ? 'writes' : 'reports';
  // The child's words are quoted line by line: nothing it writes can start a line that reads as the runtime's or another child's.
  const quoted = (text || '(no message)').split('\n').map((l) => `> ${l}`).join('\n');
  return `[child session ${e.from_session_thread_id}${e.from_agent_name ? ` (agent ${e.from_agent_name})` : ''} ${what}; its words, quoted:]\n${quoted}`;
}
