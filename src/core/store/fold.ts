/**
 * The fold: session.json is computed from the two journals, one record at a
 * time. Applying the same lines in the same order always gives the same
 * snapshot, so a snapshot plus the lines after its cursors equals a fold from
 * scratch. That is what lets readers continue from a saved offset.
 *
 * The fold also judges user events in context (a confirmation must answer a
 * tool use that waits for one, and only once): a user event that makes no
 * sense becomes a rejection, reported later as a session.error; the line
 * itself stays in the log.
 */
import { patchMetadata, SESSION_FORMAT, isUserEventType, type OpenToolUse, type SessionEvent, type SessionSnapshot } from '../schema/index.js';
import type { LineRejection } from './parse-line.js';
import { RUN_ID } from '../foundation/ids.js';
import { answerProblem, answerTarget, describeAnswerProblem, openActions } from './answer-problem.js';
import { nextWakeAt, takeWakes } from './wake-queue-fold.js';
import { addUsage } from './add-usage.js';
import { finishFold as finishKinds, foldKinds, takeIn } from '../kinds/index.js';

// The wake queue's fold and the answer rule live in their own modules; callers that knew them here still find them.
export { dueWakes, nextWakeAt } from './wake-queue-fold.js';
export { answerProblem, openActions, type AnswerProblem } from './answer-problem.js';

export function emptySnapshot(sessionId: string, atIso: string): SessionSnapshot {
  return {
    format: SESSION_FORMAT,
    id: sessionId,
    agent_id: 'unknown',
    environment_id: 'unknown',
    title: null,
    parent_session_id: null,
    overrides: {},
    metadata: {},
    created_at: atIso,
    updated_at: atIso,
    status: 'idle',
    stop_reason: null,
    running_wake_id: null,
    last_wake_id: null,
    retry_at: null,
    interrupt_taken: false,
    reports_wait: false,
    consecutive_failures: 0,
    last_error: null,
    run_errors: 0,
    usage: { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, model_requests: 0, cost_usd: 0 },
    pending_events: [],
    processed_through_line: 0,
    open_tool_uses: [],
    rejected: [],
    reported: [],
    inbox_taken: [],
    pending_wakes: [],
    wakes_taken: [],
    wakes_consumed: 0,
    wakes_cancelled: 0,
    journals: { events: { offset: 0, line: 0, ino: 0 }, wake_queue: { offset: 0, line: 0, ino: 0 } },
    next_wake_at: null,
    held_back: { events: 0, wake_queue: 0 },
    outcome: null,
    depth: 0,
    tree_max_depth: null,
    tree_max_sessions: null,
    tree_max_spawns_per_minute: null,
    last_interrupt_at: null,
    mandate_at: null,
    spawn_refusals: { count: 0, last: null },
    children: {},
    delivered_messages: [],
    tree_usage: { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, model_requests: 0, cost_usd: 0 },
    compaction: null,
    context_warned: [],
    context_cut: null,
    pending_outcomes: [],
    outcome_evaluations: [],
    paused: null,
    archived_at: null,
    counts: { pending_events: 0, pending_wakes: 0, requires_action: 0, unreported_errors: 0 },
  };
}

/** Fills in the derived fields after a fold (they are never read back as input). */
export function finishFold(s: SessionSnapshot): SessionSnapshot {
  s.next_wake_at = nextWakeAt(s);
  finishKinds(s);
  s.counts = {
    pending_events: s.pending_events.length,
    pending_wakes: s.pending_wakes.length,
    requires_action: openActions(s).length,
    unreported_errors: s.rejected.length,
  };
  return s;
}

const key = (file: string, line: number) => `${file}:${line}`;

/** inbox_taken keeps at most this many names (a drain takes at most MAX_INBOX_FILES files; see inbox.ts). */
const MAX_INBOX_TAKEN = 4096;

/**
 * Ids of the pending events, kept beside the snapshot while a fold runs so a
 * duplicate check costs O(1), not O(pending). Rebuilt when the list changed
 * identity (it is replaced, never edited in place, except by push below).
 */
const pendingIndex = new WeakMap<SessionSnapshot['pending_events'], Set<string>>();
function pendingIds(s: SessionSnapshot): Set<string> {
  let ids = pendingIndex.get(s.pending_events);
  if (!ids) {
    ids = new Set(s.pending_events.map((p) => p.id));
    pendingIndex.set(s.pending_events, ids);
  }
  return ids;
}

/**
 * "file:line" keys of `reported` and of `rejected`, kept beside the snapshot
 * (like pendingIds) so that a log with many bad lines folds in linear time.
 * Both lists are only pushed to and spliced in place below, which keep them
 * in step; a list of another identity (read from session.json) is indexed
 * afresh.
 */
const reportedIndex = new WeakMap<SessionSnapshot['reported'], Set<string>>();
const rejectedIndex = new WeakMap<SessionSnapshot['rejected'], Set<string>>();
function reportedKeys(s: SessionSnapshot): Set<string> {
  let x = reportedIndex.get(s.reported);
  if (!x) reportedIndex.set(s.reported, (x = new Set(s.reported)));
  return x;
}
function rejectedKeys(s: SessionSnapshot): Set<string> {
  let x = rejectedIndex.get(s.rejected);
  if (!x) rejectedIndex.set(s.rejected, (x = new Set(s.rejected.map((r) => key(r.file, r.line)))));
  return x;
}

/** Records a bad line, unless a session.error already reported it. */
export function applyRejection(s: SessionSnapshot, file: 'events.jsonl' | 'wake-queue.jsonl', r: LineRejection): void {
  const k = key(file, r.line);
  if (reportedKeys(s).has(k)) return;
  const rejected = rejectedKeys(s);
  if (rejected.has(k)) return;
  s.rejected.push({ file, line: r.line, event_id: r.eventId, code: r.code, message: r.message });
  rejected.add(k);
}

/** Marks a line reported by a session.error: it leaves `rejected` and is never recorded again. */
function markReported(s: SessionSnapshot, file: 'events.jsonl' | 'wake-queue.jsonl', line: number): void {
  const k = key(file, line);
  const reported = reportedKeys(s);
  if (!reported.has(k)) {
    s.reported.push(k);
    reported.add(k);
  }
  const rejected = rejectedKeys(s);
  if (rejected.has(k)) {
    // Reports come in the order of the lines they report: the index is almost always 0.
    const i = s.rejected.findIndex((r) => r.file === file && r.line === line);
    if (i >= 0) s.rejected.splice(i, 1);
    rejected.delete(k);
  }
}

function reject(s: SessionSnapshot, line: number, eventId: string, message: string, code = 'invalid_event') {
  applyRejection(s, 'events.jsonl', { line, code, message, eventId });
}

/** Checks a user event against the state so far: a message saying why it cannot be accepted, or null. */
function judgeUserEvent(s: SessionSnapshot, e: SessionEvent, line: number): string | null {
  if (pendingIds(s).has(e.id)) {
    return `events.jsonl line ${line}: ${e.type}: id ${e.id} is already used by a pending event`;
  }
  for (const k of foldKinds(e.type)) {
    const why = k.judge?.(s, e, line);
    if (why) return why;
  }
  const target = answerTarget(e);
  if (!target) return null;
  const p = answerProblem(s, target.kind, target.useId);
  return p ? describeAnswerProblem(p, { line, type: e.type }, target.kind, target.useId) : null;
}

function updateProcessedThrough(s: SessionSnapshot, foldedLine: number) {
  const first = s.pending_events[0];
  s.processed_through_line = first ? first.line - 1 : foldedLine;
}

/**
 * Provenance of a runtime-only line (docs/format.md, "Who may write what").
 * A person or a program appends user.* events and session.updated; every
 * other type is written by a run, and is accepted only as such:
 *
 * - a `session.status_running` opens a run when its `wake_id` is a run id of
 *   the runtime's form, newer than every run before it in this log (run ids
 *   sort by time, and wake() mints each one past the last); a continuation
 *   must name the run in progress;
 * - every other runtime line must carry the `wake_id` of the run in
 *   progress (its status_running came before it, and no status_idle,
 *   status_rescheduled or status_terminated of it yet); the ending records
 *   close the run;
 * - a session.error that reports a bad line (`line`) may come from the
 *   lease holder just before its run opens: its `wake_id` is then a run id
 *   no older than the last run.
 *
 * Returns why a line is refused, or null. A refused line stays in the log,
 * changes nothing, and is reported once.
 */
/** The code of a report of a refused inbox/ file (see wake.ts and inbox.ts). */
export const INBOX_REPORT_CODE = 'invalid_inbox_file';

/** Checks the proof of a run's opening record (see run-key.ts); absent in folds that do not judge proofs. */
export type RunVerifier = (runId: string, proof: string | undefined, line: number) => boolean;

function unproven(s: SessionSnapshot, e: SessionEvent, line: number, verify: RunVerifier | undefined): string | null {
  if (isUserEventType(e.type) || e.type === 'session.created' || e.type === 'session.updated') return null;
  const where = `events.jsonl line ${line}: ${e.type}`;
  if (e.type === 'session.status_running') {
    const w = e.wake_id;
    if (e.continuation) return w === s.running_wake_id ? null : `${where}: a continuation of run ${w}, which is not the run in progress; only a run writes this`;
    if (!RUN_ID.test(w)) return `${where}: wake_id ${JSON.stringify(w)} is not a run id the runtime writes; only a run writes this (a person or program appends user.* events)`;
    if (s.last_wake_id !== null && w <= s.last_wake_id) return `${where}: run ${w} is not newer than the last run (${s.last_wake_id}); a copied or replayed line is not a run`;
    if (verify && !verify(w, e.proof, line)) return `${where}: run ${w} has no valid proof for this session (a line written by hand, or copied from another session's log, is not a run)`;
    return null;
  }
  const w = e.wake_id;
  if (w !== undefined && w === s.running_wake_id) return null;
  // A report of a bad line from the lease holder, just before its run opens: it may only report a line
  // that is bad (refused earlier in this log), so a stray one cannot hide a good line from the conversation.
  // A report of an inbox/ file the drain refused, from the lease holder before its run opens: it says
  // so and changes nothing (not even last_error).
  if (e.type === 'session.error' && e.line === undefined && e.error.code === INBOX_REPORT_CODE && w !== undefined && RUN_ID.test(w) && (s.last_wake_id === null || w >= s.last_wake_id)) return null;
  // (A wake-queue line cannot be judged here: that journal is folded after this one. Marking one
  // reported only silences its report; it changes no event the conversation holds.)
  if (e.type === 'session.error' && e.line !== undefined && w !== undefined && RUN_ID.test(w) && (s.last_wake_id === null || w >= s.last_wake_id)) {
    const file = e.file ?? 'events.jsonl';
    if (file === 'wake-queue.jsonl' || (e.line < line && rejectedKeys(s).has(key(file, e.line)))) return null;
  }
  const got = w === undefined ? 'it has no wake_id' : `its wake_id ${JSON.stringify(w)} is not the run in progress`;
  return `${where}: only a run of this session writes this, and ${got}${s.running_wake_id ? '' : ' (no run is in progress)'}; a person or program appends user.* events`;
}

/** Applies one event of events.jsonl (at `line`, starting at byte `offset` when known). Mutates `s`. */
export function applyEvent(s: SessionSnapshot, e: SessionEvent, line: number, readTime = false, verify?: RunVerifier, offset?: number): void {
  if (line === 1 && e.type !== 'session.created') {
    reject(s, line, e.id, `events.jsonl line 1: the first line must be session.created, got ${e.type}`);
    return;
  }
  // Bookkeeping for exactly-once moves from inbox/ (see inbox.ts), whatever the line's fate.
  if (e.inbox !== undefined && !s.inbox_taken.includes(e.inbox)) {
    s.inbox_taken.push(e.inbox);
    if (s.inbox_taken.length > MAX_INBOX_TAKEN) s.inbox_taken.splice(0, s.inbox_taken.length - MAX_INBOX_TAKEN);
  }
  const why = unproven(s, e, line, verify);
  if (why) {
    reject(s, line, e.id, why, 'unproven_event');
    updateProcessedThrough(s, line);
    return;
  }
  s.updated_at = e.created_at > s.updated_at ? e.created_at : s.updated_at;
  if (isUserEventType(e.type)) {
    const kinds = foldKinds(e.type);
    // A line that applies where it sits (a pause), or a repeat of a delivery taken already (dropped, not reported).
    if (kinds.some((k) => k.inPlace?.(s, e) === true) || kinds.some((k) => k.admit?.(s, e) === false)) return updateProcessedThrough(s, line);
    const why = judgeUserEvent(s, e, line);
    if (why) {
      reject(s, line, e.id, why, 'invalid_answer');
    } else {
      pendingIds(s).add(e.id);
      s.pending_events.push({ id: e.id, type: e.type, line, ...(readTime ? { read_at: e.created_at } : {}) });
      const target = answerTarget(e);
      const use = target && s.open_tool_uses.find((u) => u.id === target.useId);
      if (use) use.answered_by = e.id;
      for (const k of kinds) k.accepted?.(s, e);
    }
    updateProcessedThrough(s, line);
    return;
  }
  switch (e.type) {
    case 'session.created':
      if (line !== 1) {
        reject(s, line, e.id, `events.jsonl line ${line}: session.created may only be the first line`);
        break;
      }
      s.agent_id = e.agent_id;
      s.environment_id = e.environment_id;
      s.title = e.title ?? null;
      s.parent_session_id = e.parent_session_id ?? null;
      s.depth = e.depth ?? 0;
      s.tree_max_depth = e.tree_max_depth ?? null;
      s.tree_max_sessions = e.tree_max_sessions ?? null;
      s.tree_max_spawns_per_minute = e.tree_max_spawns_per_minute ?? null;
      s.overrides = { ...(e.overrides ?? {}) };
      s.metadata = { ...(e.metadata ?? {}) };
      s.created_at = e.created_at;
      s.updated_at = e.created_at;
      break;
    case 'session.updated':
      if (e.title !== undefined) s.title = e.title ?? null;
      if (e.overrides) s.overrides = { ...s.overrides, ...e.overrides, env: { ...s.overrides.env, ...e.overrides.env } };
      if (e.metadata) s.metadata = patchMetadata(s.metadata, e.metadata);
      if (e.archived !== undefined) s.archived_at = e.archived ? (s.archived_at ?? e.created_at) : null;
      break;
    case 'session.status_running': {
      // Every inbox move before this point finished (a drain unlinks its files before the run opens).
      if (!e.continuation) {
        s.inbox_taken = [];
        s.run_errors = 0;
      }
      s.status = 'running';
      s.stop_reason = null;
      s.retry_at = null;
      s.running_wake_id = e.wake_id;
      s.last_wake_id = e.wake_id;
      const taken = new Set(e.processed_event_ids);
      if (!e.continuation) s.interrupt_taken = false;
      if (!e.continuation) s.reports_wait = false;
      if (s.pending_events.some((p) => taken.has(p.id) && p.type === 'user.interrupt')) {
        s.interrupt_taken = true;
        s.reports_wait = true;
      }
      takeIn(s, s.pending_events.filter((p) => taken.has(p.id)), e.created_at);
      s.pending_events = s.pending_events.filter((p) => !taken.has(p.id));
      // A wake is taken when a run lists it, even if its wake.consumed record never made it.
      takeWakes(s, (e.wakes ?? []).map((w) => w.id));
      // A custom tool use is settled once the run took in its answer.
      s.open_tool_uses = s.open_tool_uses.filter((u) => !(u.kind === 'custom' && u.answered_by && taken.has(u.answered_by)));
      break;
    }
    case 'session.status_idle':
      if (s.run_errors === 0 && (e.stop_reason.type === 'end_turn' || e.stop_reason.type === 'requires_action')) s.last_error = null;
      s.interrupt_taken = false;
      s.status = 'idle';
      s.stop_reason = e.stop_reason;
      s.running_wake_id = null;
      s.retry_at = null;
      s.consecutive_failures = 0;
      if (e.wake_id) s.last_wake_id = e.wake_id;
      break;
    case 'session.status_rescheduled':
      s.interrupt_taken = false;
      s.status = 'rescheduling';
      s.stop_reason = null;
      s.running_wake_id = null;
      s.retry_at = e.retry_at;
      s.consecutive_failures += 1;
      break;
    case 'session.status_terminated':
      s.status = 'terminated';
      s.running_wake_id = null;
      s.retry_at = null;
      break;
    case 'session.error':
      if (e.line !== undefined) markReported(s, e.file ?? 'events.jsonl', e.line);
      else if (e.error.code === INBOX_REPORT_CODE) {
        // a refused inbox file, reported before a run or by one (run/inbox-during-run.ts): information, not the state of a run
      } else {
        s.last_error = { type: e.error.type, code: e.error.code ?? null, message: e.error.message, at: e.created_at, wake_id: e.wake_id ?? null, retry: e.error.retry_status?.type ?? null };
        s.run_errors += 1;
      }
      break;
    case 'span.model_request_end':
      addUsage(s, e.model_usage, 1, e.cost_usd);
      break;
    case 'agent.tool_use':
    case 'agent.custom_tool_use': {
      const use: OpenToolUse = {
        id: e.id,
        name: e.name,
        kind: e.type === 'agent.tool_use' ? 'tool' : 'custom',
        permission: e.type === 'agent.tool_use' ? e.evaluated_permission : 'ask',
        line,
        wake_id: e.wake_id ?? null,
        answered_by: null,
      };
      s.open_tool_uses.push(use);
      break;
    }
    case 'agent.tool_result':
      s.open_tool_uses = s.open_tool_uses.filter((u) => u.id !== e.tool_use_id);
      break;
    default:
      // Every other runtime event is a capability's (kinds/index.ts).
      for (const k of foldKinds(e.type)) k.apply?.(s, e, { line, ...(offset !== undefined ? { offset } : {}) });
      break;
  }
  updateProcessedThrough(s, line);
}

// ---------------------------------------------------------------- derived views

export function totalTokens(s: SessionSnapshot): number {
  return s.usage.input_tokens + s.usage.output_tokens;
}
