/**
 * POST /v1/sessions with a run token: the run spawns a child of its own
 * session, through the same core operation as its spawn_session tool
 * (core/delegation/spawn-child.ts: the roster, every delegation limit, the
 * interrupts, the records in the parent's log). A run token never makes a
 * root session: the child's parent is always the token's session.
 *
 * The body is the SDK's create: `agent` (one of the roster, or "self"),
 * `title`, and the task as `initial_events`: exactly one user.message of
 * text. `environment_id`, when given, must be the child agent's own (a
 * child runs in its agent's environment, never its parent's); `metadata`
 * and `user.define_outcome` are refused. The parent's records are written as
 * the run (its wake_id), which the fold accepts while that run is in
 * progress; the token is good only then.
 */
import { loadAgent } from '../core/definitions/definitions.js';
import { spawnChild } from '../core/delegation/spawn-child.js';
import type { Runtime } from '../core/run/run-context.js';
import type { RunClaims } from '../core/run/run-token.js';
import { SpawnSessionInput, type SessionSnapshot } from '../core/schema/index.js';
import { ApiError, conflict, invalidRequest } from './api-error.js';
import { redactorOf } from './session-access.js';
import { parseWith } from './validate.js';
import type { CreateSessionBody } from './wire-schemas.js';
import type * as z from 'zod';

/** The child made for the run `claims` names, or the API error that says why not. */
export function spawnFromRun(rt: Runtime, claims: RunClaims, body: z.output<typeof CreateSessionBody>): SessionSnapshot {
  const { store } = rt;
  const parent = store.snapshot(claims.sessionId);
  if (body.metadata !== undefined) throw invalidRequest('metadata: a child spawned by a run takes none');
  const events = body.initial_events ?? [];
  const only = events.length === 1 ? events[0] : undefined;
  if (!only || only.type !== 'user.message' || only.content.some((b) => b.type !== 'text')) {
    throw invalidRequest('initial_events: a run spawns a child with its task: exactly one user.message of text blocks');
  }
  const message = only.content.map((b) => (b.type === 'text' ? b.text : '')).join('\n');
  const target = typeof body.agent === 'string' ? body.agent : body.agent.id;
  const input = parseWith(SpawnSessionInput, { agent: target, message, ...(body.title != null ? { title: body.title } : {}) });
  const agent = loadAgent(rt.home, parent.agent_id);
  const childAgent = input.agent === 'self' ? agent.id : input.agent;
  if (body.environment_id !== undefined && body.environment_id !== safeEnvironmentOf(rt, childAgent)) {
    throw invalidRequest(`environment_id: a child runs in its agent's own environment; leave it out`);
  }
  const openedAt = runOpenedAt(rt, claims);
  const redactor = redactorOf(rt, parent);
  const r = spawnChild(
    store,
    {
      sessionId: parent.id,
      agent: { id: agent.id, def: agent.def },
      runOpenedAt: openedAt,
      redactor,
      // The parent's run holds its lease, maybe on another host: delivered, which it takes in within a second.
      emit: (evs) => store.deliverEvents(parent.id, evs, { wakeId: claims.runId, redactor }),
    },
    input,
    () => rt.deps.clock.now(),
  );
  if (r.kind === 'refused') throw new ApiError(r.reason === 'max_spawns_per_minute' ? 'rate_limit_error' : 'permission_error', r.message, false);
  return r.child;
}

/** The agent's environment id, or undefined when it does not load (spawnChild then says why). */
function safeEnvironmentOf(rt: Runtime, agentId: string): string | undefined {
  try {
    return loadAgent(rt.home, agentId).def.environment;
  } catch {
    return undefined;
  }
}

/** When the token's run opened (its session.status_running); a run that has not opened yet cannot spawn. */
function runOpenedAt(rt: Runtime, claims: RunClaims): string {
  for (const l of rt.store.readEvents(claims.sessionId).lines) {
    if (l.kind === 'event' && l.event.type === 'session.status_running' && !l.event.continuation && l.event.wake_id === claims.runId) return l.event.created_at;
  }
  throw conflict(`run ${claims.runId} has not opened yet: spawn once it runs`);
}
