/**
 * What callers do to sessions without a model: create one, send it a message,
 * schedule a revisit, ask for its status. The CLI, the daemon's first-run demo
 * and the tests all go through these.
 */
import type { Clock } from './clock.js';
import { iso } from './clock.js';
import { loadAgent, loadEnvironment } from './definitions.js';
import { SessionStore } from './store/session-store.js';
import { dueWakes, nextWakeAt, openActions } from './store/fold.js';
import { leaseHeld, readLeaseOwner, type LeaseOwner } from './lease.js';
import { invalidInput } from './errors.js';
import type { SessionEvent, SessionSnapshot, UserContentBlock } from './schema/index.js';

export interface CreateInput {
  agent: string;
  env?: string | undefined;
  title?: string | undefined;
  parentSessionId?: string | undefined;
  /** Extra environment variables for this session only, layered over the environment's. */
  env_overrides?: Record<string, string> | undefined;
}

/** Creates a session after checking that its agent and environment load. */
export function createSession(store: SessionStore, input: CreateInput): SessionSnapshot {
  const agent = loadAgent(store.home, input.agent);
  const envId = input.env ?? agent.def.environment;
  loadEnvironment(store.home, envId);
  return store.create({
    agentId: agent.id,
    environmentId: envId,
    title: input.title ?? null,
    parentSessionId: input.parentSessionId ?? null,
    ...(input.env_overrides ? { overrides: { env: input.env_overrides } } : {}),
  });
}

export function sendMessage(store: SessionStore, sessionId: string, content: string | UserContentBlock[]): SessionEvent {
  if (typeof content === 'string' && content.trim() === '') throw invalidInput('the message is empty');
  const blocks: UserContentBlock[] = typeof content === 'string' ? [{ type: 'text', text: content }] : content;
  return store.appendUserEvent(sessionId, { type: 'user.message', content: blocks });
}

export function scheduleRevisit(
  store: SessionStore,
  clock: Clock,
  sessionId: string,
  when: { inMs?: number; at?: string },
  reason: string,
) {
  let dueMs: number;
  if (when.at !== undefined) {
    dueMs = Date.parse(when.at);
    if (!Number.isFinite(dueMs) || !/\d{4}-\d{2}-\d{2}T/.test(when.at)) {
      throw invalidInput(`--at "${when.at}" is not an ISO time (expected e.g. 2026-11-21T10:05:00Z)`);
    }
  } else if (when.inMs !== undefined) {
    dueMs = clock.now() + when.inMs;
  } else {
    throw invalidInput('expected --in DURATION or --at ISO');
  }
  if (reason.trim() === '') throw invalidInput('--reason must not be empty');
  return store.scheduleWake(sessionId, { due_at: iso(dueMs), reason, source: 'cli' });
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
