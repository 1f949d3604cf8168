/**
 * Answering an escalation (docs/context.md, "Escalation"): the agent's
 * `escalate` call, or the StaleLoop guard's, waits as a custom tool use; a
 * person answers it by picking one of its options (1-based) or with a
 * message of their own. The answer is an ordinary user.custom_tool_result,
 * appended after the same checks as any custom tool result
 * (answerCustomTool), whose text names the option picked or carries the
 * message. Also what `status` shows of a waiting escalation.
 */
import { EscalateInput, type SessionEvent } from '../schema/index.js';
import type { SessionStore } from '../store/session-store.js';
import { invalidField, invalidInput } from '../foundation/errors.js';
import { answerCustomTool } from './session-ops.js';
import { messageAnswer, pickedAnswer } from '../tools/escalate-tool.js';

export type EscalationAnswer = { pick: number } | { message: string };

/**
 * The logged events with these ids, by id (one read of the log). A tool use
 * the fold holds open is taken from the line the fold accepted it at; any
 * other id from its first line: a later line reusing the id (a forgery, a
 * copy) never replaces what the person is shown and answers.
 */
function eventsById(store: SessionStore, sessionId: string, ids: ReadonlySet<string>): Map<string, { line: number; event: SessionEvent }> {
  const accepted = new Map(store.snapshot(sessionId).open_tool_uses.map((u) => [u.id, u.line] as const));
  const out = new Map<string, { line: number; event: SessionEvent }>();
  for (const l of store.readEvents(sessionId).lines) {
    if (l.kind !== 'event' || !ids.has(l.event.id) || out.has(l.event.id)) continue;
    const at = accepted.get(l.event.id);
    if (at !== undefined && at !== l.line) continue;
    out.set(l.event.id, { line: l.line, event: l.event });
  }
  return out;
}

/** Appends the answer to escalation `eventId` (an `escalate` custom tool use awaiting its result). */
export function resolveEscalation(store: SessionStore, sessionId: string, eventId: string, answer: EscalationAnswer): SessionEvent {
  const found = eventsById(store, sessionId, new Set([eventId])).get(eventId);
  if (!found) throw invalidInput(`session ${sessionId} has no event ${eventId} (expected an escalation: an escalate custom tool use)`);
  const e = found.event;
  if (e.type !== 'agent.custom_tool_use' || e.name !== 'escalate') {
    throw invalidInput(`${eventId} is a ${e.type}${'name' in e ? ` (${e.name})` : ''} (line ${found.line}), not an escalation`);
  }
  if ('message' in answer) {
    if (answer.message.trim() === '') throw invalidField('message', 'is empty (say what the agent should do)');
    return answerCustomTool(store, sessionId, eventId, messageAnswer(answer.message), false);
  }
  const parsed = EscalateInput.safeParse(e.input);
  if (!parsed.success) throw invalidField('pick', `cannot pick: the options of ${eventId} (line ${found.line}) cannot be read; answer with a message`);
  const n = parsed.data.options.length;
  if (!Number.isInteger(answer.pick) || answer.pick < 1 || answer.pick > n) {
    throw invalidField('pick', `${answer.pick} is not an option of ${eventId}: it has ${n}, numbered 1 to ${n}`);
  }
  return answerCustomTool(store, sessionId, eventId, pickedAnswer(parsed.data, answer.pick), false);
}

/** The inputs of the escalations among these waiting custom tool uses, by event id (read from the log only when one is an escalation). */
export function escalationsOf(store: SessionStore, sessionId: string, waiting: ReadonlyArray<{ id: string; name: string; kind: string }>): Map<string, EscalateInput> {
  const ids = new Set(waiting.filter((w) => w.kind === 'custom' && w.name === 'escalate').map((w) => w.id));
  const out = new Map<string, EscalateInput>();
  if (ids.size === 0) return out;
  for (const [id, { event }] of eventsById(store, sessionId, ids)) {
    if (event.type !== 'agent.custom_tool_use') continue;
    const p = EscalateInput.safeParse(event.input);
    if (p.success) out.set(id, p.data);
  }
  return out;
}
