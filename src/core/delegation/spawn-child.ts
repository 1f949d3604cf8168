/**
 * Spawning a child session: the one operation behind the spawn_session tool
 * and a run token's POST /v1/sessions (docs/delegation.md, "The tools";
 * docs/http.md, "Run tokens"). Every limit and interrupt check is here
 * (spawn-limits.ts), so the two ways in cannot differ.
 *
 * What it writes, in this order, so a kill between two writes leaves
 * nothing a later run cannot read: the limits and interrupts checked → the
 * child's folder (session.created with its parent, depth and tree limits,
 * one rename) → the interrupts checked again (a child made as one landed is
 * removed) → the task as the child's user.message, stamped with when the
 * parent's run opened (`mandate_at`) → in the parent's log, through `emit`,
 * session.thread_created + agent.thread_message_sent (one write). A refusal
 * for a limit or an interrupt is a session.spawn_refused line in the
 * parent's log.
 */
import { createSession } from '../ops/create-session.js';
import type { Redactor } from '../foundation/redact.js';
import type { SessionStore } from '../store/session-store.js';
import type { AgentDefinition, NewEvent, SessionEvent, SessionSnapshot, SpawnRefusalReason, SpawnSessionInput } from '../schema/index.js';
import { rosterOf } from './roster.js';
import { interruptedSinceRun, spawnBounds, spawnRefusal } from './spawn-limits.js';

/** The parent's side: a session in a run. */
export interface SpawningParent {
  sessionId: string;
  agent: { id: string; def: AgentDefinition };
  /** When the parent's run opened (its session.status_running's created_at). */
  runOpenedAt: string;
  /** The parent's secrets: the task crosses to the child redacted with them. */
  redactor: Redactor;
  /** Appends to the parent's log as its run (one write, with the run's wake_id). */
  emit: (events: readonly NewEvent[]) => SessionEvent[];
  /** The parent run's trace context, when it is traced: the child's task carries it, so the child's run joins the trace. */
  traceparent?: string;
}

export type SpawnResult =
  | { kind: 'spawned'; child: SessionSnapshot; agent: string }
  /** `reason` is absent for a target outside the roster (not a limit: nothing is recorded). */
  | { kind: 'refused'; reason?: SpawnRefusalReason; message: string };

const text = (t: string) => [{ type: 'text' as const, text: t }];

/** Makes a child of `parent` for `input` (an agent of its roster, the task, a title), or says why not. Never throws for a refusal. */
export function spawnChild(store: SessionStore, parent: SpawningParent, input: SpawnSessionInput, nowMs: () => number): SpawnResult {
  const { agent, emit, runOpenedAt } = parent;
  const me = store.snapshot(parent.sessionId);
  const roster = rosterOf(agent.id, agent.def);
  const target = input.agent === 'self' ? agent.id : input.agent;
  if (!roster.includes(target)) return { kind: 'refused', message: `not spawned: "${target}" is not one of your delegates (${roster.join(', ') || 'none'})` };
  const refuse = (reason: SpawnRefusalReason, why: string): SpawnResult => {
    const message = `not spawned: ${why}`;
    emit([{ type: 'session.spawn_refused', reason, agent_name: target, message }]);
    return { kind: 'refused', reason, message };
  };
  const bounds = spawnBounds(agent.def.limits, me);
  const refusal = spawnRefusal(store, me, bounds, { runOpenedAt, nowMs: nowMs(), maxChildren: agent.def.limits.max_children });
  if (refusal) return refuse(refusal.reason, refusal.why);
  let child;
  try {
    child = createSession(store, { agent: target, title: input.title, parentSessionId: parent.sessionId, treeMaxDepth: bounds.maxDepth, treeMaxSessions: bounds.maxTreeSessions, treeMaxSpawnsPerMinute: bounds.maxSpawnsPerMinute });
  } catch (e) {
    return { kind: 'refused', message: `not spawned: ${(e as Error).message}` };
  }
  // An interrupt that landed while the child was made: the child has no task yet and nothing names it, so it is
  // taken out again. One that lands after this look finds a task asked for before it: the child's run does none of it.
  const late = interruptedSinceRun(store, store.snapshot(parent.sessionId, { persist: false }), runOpenedAt, nowMs());
  if (late) {
    try {
      store.discardUnborn(child.id);
    } catch {
      // left in place, it is a session with no task: it never runs
    }
    return refuse('interrupted', late);
  }
  const task = parent.redactor.text(input.message);
  // Through the one delivery function: on a shared home another host's daemon may already be looking at the child.
  store.deliverUserEvent(child.id, { type: 'user.message', content: text(task), mandate_at: runOpenedAt, ...(parent.traceparent ? { traceparent: parent.traceparent } : {}) });
  emit([
    { type: 'session.thread_created', session_thread_id: child.id, agent_name: target, workflow_run_id: null, depth: child.depth, ...(input.title ? { title: input.title } : {}) },
    { type: 'agent.thread_message_sent', to_session_thread_id: child.id, to_agent_name: target, content: text(task) },
  ]);
  return { kind: 'spawned', child: store.snapshot(child.id), agent: target };
}
