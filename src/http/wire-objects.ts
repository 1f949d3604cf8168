/**
 * What the API answers with: a session's snapshot as the SDK's
 * BetaManagedAgentsSession, and a logged event as the SDK's session event.
 * Both are redacted with the session's secrets before they leave (the
 * caller passes the session's Redactor, as the CLI's `events` and `status`
 * print through it).
 *
 * Fields of our own ride along where the SDK's types have none (the event's
 * `created_at` and `wake_id`, the session's `stop_reason`, `usage.cost_usd`,
 * `parent_session_id`); a client that does not know them ignores them.
 */
import type { Redactor } from '../core/foundation/redact.js';
import { isPauseEventType, isUserEventType, type SessionEvent, type SessionSnapshot } from '../core/schema/index.js';

/** A session as the SDK's BetaManagedAgentsSession (plus our own fields). */
export function wireSession(s: SessionSnapshot, redactor: Redactor): Record<string, unknown> {
  return redactor.deep({
    id: s.id,
    type: 'session',
    agent: { type: 'agent', id: s.agent_id, name: s.agent_id },
    environment_id: s.environment_id,
    status: s.status,
    stop_reason: s.stop_reason,
    title: s.title,
    metadata: s.metadata,
    created_at: s.created_at,
    updated_at: s.updated_at,
    archived_at: s.archived_at,
    budget: null,
    resources: [],
    vault_ids: [],
    stats: {},
    usage: {
      input_tokens: s.usage.input_tokens,
      output_tokens: s.usage.output_tokens,
      cache_read_input_tokens: s.usage.cache_read_input_tokens,
      cache_creation: { ephemeral_5m_input_tokens: s.usage.cache_creation_input_tokens },
      list_cost: { amount: s.usage.cost_usd.toFixed(6), currency: 'USD' },
      cost_usd: s.usage.cost_usd,
      model_requests: s.usage.model_requests,
    },
    outcome_evaluations: s.outcome_evaluations.map((o) => ({ type: 'outcome_evaluation', ...o })),
    parent_session_id: s.parent_session_id,
    paused: s.paused !== null,
    pending_events: s.pending_events.length,
  });
}

/**
 * An event as the SDK's session event: `processed_at` given (the caller
 * knows it for a user event: the time of the run that took it in, null
 * while pending; any other event was processed when written), and the run's
 * proof taken out (it is the runtime's, not the client's).
 */
export function wireEvent(e: SessionEvent, processedAt: string | null | undefined, redactor: Redactor): Record<string, unknown> {
  const { proof: _proof, ...rest } = e as SessionEvent & { proof?: unknown };
  return redactor.deep({ ...rest, processed_at: processedAt !== undefined ? processedAt : defaultProcessedAt(e) });
}

/** A user event is pending until a run takes it in (a pause or resume applies where its line is); any other is processed when written. */
export function defaultProcessedAt(e: SessionEvent): string | null {
  return isUserEventType(e.type) && !isPauseEventType(e.type) ? null : e.created_at;
}
