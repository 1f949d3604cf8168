/**
 * What callers do to sessions without a model: send one a message, schedule a
 * revisit, answer it, ask for its status (creating one is create-session.ts).
 * The CLI, the daemon's first-run demo and the tests all go through these.
 * None of them reads the agent or environment definitions, so none loads the
 * YAML parser: `openboa send` starts without it.
 */
import type { Clock } from '../foundation/clock.js';
import { iso } from '../foundation/clock.js';
import { SessionStore } from '../store/session-store.js';
import { dueWakes, nextWakeAt } from '../store/wake-queue-fold.js';
import { leaseHeld, readLeaseOwner, type LeaseOwner } from '../foundation/lease.js';
import { invalidField, invalidInput } from '../foundation/errors.js';
import { userMessage } from './user-message.js';
import { answerProblem, openActions } from '../store/answer-problem.js';
import { firstFiringFrom } from '../schedule/recurrence.js';
import { asQueueWriter } from './queue-lease.js';
import { MAX_METADATA_PAIRS, DEFAULT_MAX_ITERATIONS, MAX_CHECK_CHARS, MAX_DESCRIPTION_CHARS, MAX_PATH_CHARS, MAX_ITERATIONS, MAX_OUTCOME_FILES, MAX_RUBRIC_CHARS, outcomeIdOf, recurrenceIssues, recurrenceOf, type RecurrenceFields, type NewEvent, type SessionEvent, type SessionSnapshot, type UserContentBlock } from '../schema/index.js';

export function sendMessage(store: SessionStore, sessionId: string, content: string | UserContentBlock[], o: { traceparent?: string } = {}): SessionEvent {
  return store.deliverUserEvent(sessionId, userMessage(content, o));
}

/**
 * A revisit a person schedules: once (at a moment, or after a delay), or
 * recurring (`every`, or `cron` in `timezone`), when the moment or delay is
 * its first firing (default: one period from now, or the next occurrence).
 */
export function scheduleRevisit(
  store: SessionStore,
  clock: Clock,
  sessionId: string,
  when: { inMs?: number; at?: string } & RecurrenceFields,
  reason: string,
) {
  const issue = recurrenceIssues(when)[0];
  if (issue) throw invalidField(issue.path.join('.'), issue.message);
  const rule = recurrenceOf(when);
  // One reading of the clock: the delay counts from the moment the record says it was asked for.
  const now = clock.now();
  let startMs: number | undefined;
  if (when.at !== undefined) {
    startMs = Date.parse(when.at);
    if (!Number.isFinite(startMs) || !/\d{4}-\d{2}-\d{2}T/.test(when.at)) {
      throw invalidField('at', `"${when.at}" is not an ISO time (expected e.g. 2026-11-21T10:05:00Z)`);
    }
  } else if (when.inMs !== undefined) {
    if (!(when.inMs >= 0 && when.inMs <= 10 * 366 * 86_400_000)) throw invalidField('in', 'must be at most ten years');
    startMs = now + when.inMs;
  } else if (!rule) {
    throw invalidInput('a revisit needs a time: a delay (in) or a moment (at)');
  }
  if (reason.trim() === '') throw invalidField('reason', 'must not be empty');
  const dueMs = rule ? firstFiringFrom(rule, now, startMs) : (startMs as number);
  if (dueMs === null) throw invalidField('cron', `"${when.cron}" never fires${startMs !== undefined ? ` at or after ${iso(startMs)}` : ''}`);
  // On a shared home, under the session's lease (queue-lease.ts).
  return asQueueWriter(store, clock, sessionId, () => store.scheduleWake(sessionId, { due_at: iso(dueMs), reason, source: 'cli', created_at: iso(now), ...(rule ? { recurrence: rule } : {}) }));
}

/**
 * A person cancels a pending revisit: a recurring one stops for good (its
 * own id cancelled). The heartbeat is agent.yaml's to change, not the queue's.
 */
export function cancelRevisit(store: SessionStore, clock: Clock, sessionId: string, wakeId: string) {
  // The check and the append together: on a shared home, under the session's lease (queue-lease.ts).
  return asQueueWriter(store, clock, sessionId, () => {
    const snap = store.snapshot(sessionId);
    const w = snap.pending_wakes.find((x) => x.id === wakeId);
    if (!w) throw invalidInput(`session ${sessionId} has no pending revisit ${wakeId} (pending: ${snap.pending_wakes.map((x) => x.id).join(', ') || 'none'})`);
    if (w.source === 'heartbeat') throw invalidInput(`${wakeId} is the heartbeat of agent ${snap.agent_id}: remove or change heartbeat in its agent.yaml (or pause the session)`);
    store.settleWakes(sessionId, 'wake.cancelled', [wakeId], { reason: 'cancelled from the CLI' });
    return w;
  });
}

/**
 * Checks, with the fold's own rule (answerProblem), that a tool use waits for
 * this kind of answer, or says precisely why not.
 */
function openUse(store: SessionStore, sessionId: string, eventId: string, kind: 'tool' | 'custom') {
  const p = answerProblem(store.snapshot(sessionId), kind, eventId);
  if (!p) return;
  const want = kind === 'tool' ? 'an agent.tool_use awaiting confirmation' : 'an agent.custom_tool_use awaiting a result';
  switch (p.kind) {
    case 'not_open': {
      const found = store.readEvents(sessionId).lines.find((l) => l.kind === 'event' && l.event.id === eventId);
      if (!found || found.kind !== 'event') throw invalidInput(`session ${sessionId} has no event ${eventId} (expected ${want})`);
      const e = found.event;
      if (e.type === 'agent.tool_use' || e.type === 'agent.custom_tool_use' || e.type === 'agent.mcp_tool_use') throw invalidInput(`${eventId} (${e.name}, line ${found.line}) already has its result; it awaits no answer`);
      throw invalidInput(`${eventId} is a ${e.type} (line ${found.line}), not ${want}`);
    }
    case 'wrong_kind':
      if (kind === 'tool') throw invalidInput(`${eventId} is a custom tool use (${p.use.name}); answer it with a custom tool result`, undefined, { answer_with: 'tool-result', session_id: sessionId, event_id: eventId });
      throw invalidInput(`${eventId} is a built-in tool use (${p.use.name}); answer it with a confirmation`, undefined, { answer_with: 'confirm', session_id: sessionId, event_id: eventId });
    case 'did_not_ask':
      throw invalidInput(`${eventId} (${p.use.name}) did not ask for confirmation`);
    case 'answered':
      throw invalidInput(`${eventId} (${p.use.name}) was already answered by ${p.by}`);
  }
}

/** Appends a user.tool_confirmation after checking the tool use waits for one. */
export function confirmToolUse(store: SessionStore, sessionId: string, toolUseId: string, answer: { allow: boolean; message?: string | undefined }): SessionEvent {
  if (answer.allow && answer.message !== undefined) throw invalidField('message', 'goes with a deny only (it tells the agent why)');
  openUse(store, sessionId, toolUseId, 'tool');
  return store.deliverUserEvent(sessionId, {
    type: 'user.tool_confirmation',
    tool_use_id: toolUseId,
    result: answer.allow ? 'allow' : 'deny',
    ...(answer.message !== undefined ? { deny_message: answer.message } : {}),
  });
}

/** Appends a user.custom_tool_result after checking the custom tool use waits for one. */
export function answerCustomTool(store: SessionStore, sessionId: string, customToolUseId: string, text: string, isError: boolean): SessionEvent {
  openUse(store, sessionId, customToolUseId, 'custom');
  if (text.trim() === '') throw invalidInput('the result text is empty');
  return store.deliverUserEvent(sessionId, {
    type: 'user.custom_tool_result',
    custom_tool_use_id: customToolUseId,
    content: [{ type: 'text', text }],
    ...(isError ? { is_error: true } : {}),
  });
}

export interface OutcomeRequest {
  description: string;
  /** The rubric's text (markdown). */
  rubric?: string;
  /** A shell command whose exit 0 means met, or "auto" (/workspace/check.sh). */
  check?: string;
  maxIterations?: number;
  /** Workspace files the rubric grader reads. */
  files?: string[];
}

/**
 * Appends a user.define_outcome (docs/outcomes.md) in the shape Managed
 * Agents echoes it: with its outcome_id (derived from the event id, as the
 * runtime derives it for any line) and max_iterations filled in.
 */
export function defineOutcome(store: SessionStore, sessionId: string, o: OutcomeRequest): SessionEvent {
  if (o.description.trim() === '') throw invalidField('description', 'the outcome needs a description of what to produce');
  if (o.description.length > MAX_DESCRIPTION_CHARS) throw invalidField('description', `the description is ${o.description.length} characters; at most ${MAX_DESCRIPTION_CHARS}`);
  if (o.check !== undefined && o.check.length > MAX_CHECK_CHARS) throw invalidField('check', `the check is ${o.check.length} characters; at most ${MAX_CHECK_CHARS}`);
  const longPath = o.files?.find((f) => f.length > MAX_PATH_CHARS || f.includes('\0') || f.trim() === '');
  if (longPath !== undefined) throw invalidField('files', `a listed file must be a path of 1 to ${MAX_PATH_CHARS} characters without NUL`);
  if (o.rubric !== undefined && o.rubric.trim() === '') throw invalidField('rubric', 'the rubric is empty');
  if (o.rubric !== undefined && o.rubric.length > MAX_RUBRIC_CHARS) throw invalidField('rubric', `the rubric is ${o.rubric.length} characters; at most ${MAX_RUBRIC_CHARS}`);
  if (o.check !== undefined && o.check.trim() === '') throw invalidField('check', 'the check is empty (give a command, or auto)');
  const max = o.maxIterations ?? DEFAULT_MAX_ITERATIONS;
  if (!Number.isInteger(max) || max < 1 || max > MAX_ITERATIONS) throw invalidField('max_iterations', `must be a whole number from 1 to ${MAX_ITERATIONS}`);
  if (o.files && o.files.length > MAX_OUTCOME_FILES) throw invalidField('files', `at most ${MAX_OUTCOME_FILES} files`);
  const id = store.deps.ids.event();
  const event = {
    type: 'user.define_outcome' as const,
    id,
    outcome_id: outcomeIdOf(id),
    description: o.description,
    ...(o.rubric !== undefined ? { rubric: { type: 'text' as const, content: o.rubric } } : {}),
    max_iterations: max,
    ...(o.check !== undefined ? { check: o.check.trim() === 'auto' ? { auto: true as const } : { command: o.check } } : {}),
    ...(o.files?.length ? { files: o.files } : {}),
  };
  return store.deliverUserEvent(sessionId, event as NewEvent);
}

export function interruptSession(store: SessionStore, sessionId: string, reason?: string): SessionEvent {
  return store.deliverUserEvent(sessionId, { type: 'user.interrupt', ...(reason ? { reason } : {}) });
}

/**
 * Changes the session's own definition (applies from the next run): title,
 * token budget, metadata (a patch: null removes a key; at most 16 pairs after it).
 */
export function updateSession(store: SessionStore, sessionId: string, change: { title?: string | null; budget?: number | null; metadata?: Record<string, string | null> }): SessionEvent {
  if (change.title === undefined && change.budget === undefined && change.metadata === undefined) throw invalidInput('nothing to change: give a title, a budget or metadata');
  if (change.metadata) {
    const after = new Set(Object.keys(store.snapshot(sessionId).metadata));
    for (const [k, v] of Object.entries(change.metadata)) v === null ? after.delete(k) : after.add(k);
    if (after.size > MAX_METADATA_PAIRS) throw invalidField('metadata', `would hold ${after.size} pairs; at most ${MAX_METADATA_PAIRS}`);
  }
  return store.deliverEvents(sessionId, [
    {
      type: 'session.updated',
      ...(change.title !== undefined ? { title: change.title } : {}),
      ...(change.budget !== undefined ? { overrides: { session_token_budget: change.budget } } : {}),
      ...(change.metadata !== undefined ? { metadata: change.metadata } : {}),
    },
  ])[0] as SessionEvent;
}

export interface SessionStatus {
  snapshot: SessionSnapshot;
  lease: { held: boolean; owner: LeaseOwner | null };
  /** User events waiting for a run. */
  pending_events: SessionSnapshot['pending_events'];
  /** Tool uses waiting on a person (confirmations, custom tool results). */
  requires_action: Array<{ id: string; name: string; kind: 'tool' | 'custom' }>;
  due_wakes: number;
  next_wake_at: string | null;
  /** Bad lines not yet reported in the log. */
  unreported_errors: SessionSnapshot['rejected'];
}

export async function sessionStatus(store: SessionStore, clock: Clock, sessionId: string): Promise<SessionStatus> {
  const snapshot = store.snapshot(sessionId);
  const p = store.paths(sessionId);
  const held = await leaseHeld(p);
  return {
    snapshot,
    lease: { held, owner: held ? readLeaseOwner(p) : null },
    pending_events: snapshot.pending_events,
    requires_action: openActions(snapshot).map((u) => ({ id: u.id, name: u.name, kind: u.kind })),
    due_wakes: dueWakes(snapshot, clock.now()).length,
    next_wake_at: nextWakeAt(snapshot),
    unreported_errors: snapshot.rejected,
  };
}
