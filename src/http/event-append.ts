/**
 * POST …/events: each event the client sends, handed to the core operation
 * the CLI uses for it (session-ops.ts, resolve-escalation.ts), which checks
 * it against the session (a confirmation must answer a tool use that asks,
 * …) and appends it in one write. Nothing here appends on its own.
 *
 * Events are taken in order. A refusal of events[i] (400, naming
 * `events.i`) leaves the events before it appended, as a sequence of
 * `openboa` commands would; the message says how many were.
 */
import { answerCustomTool, confirmToolUse, defineOutcome, interruptSession, sendMessage } from '../core/ops/session-ops.js';
import { resolveEscalation } from '../core/ops/resolve-escalation.js';
import { OpenboaError } from '../core/foundation/errors.js';
import type { SessionStore } from '../core/store/session-store.js';
import type { SessionEvent } from '../core/schema/index.js';
import { fromCoreError, ApiError, invalidRequest } from './api-error.js';
import type { EventParams } from './wire-schemas.js';
import { withTraceparent } from '../core/telemetry/traceparent.js';

function appendOne(store: SessionStore, id: string, e: EventParams, traceparent: string | null): SessionEvent {
  switch (e.type) {
    case 'user.message':
      {
      // The request's traceparent header (W3C trace context): the run that takes the message in joins the caller's trace.
      const tp = withTraceparent<{ type: string; traceparent?: string }>({ type: e.type }, traceparent).traceparent;
      return sendMessage(store, id, e.content, tp ? { traceparent: tp } : {});
    }
    case 'user.interrupt':
      return interruptSession(store, id, e.reason ?? undefined);
    case 'user.tool_confirmation':
      return confirmToolUse(store, id, e.tool_use_id, { allow: e.result === 'allow', ...(e.deny_message != null ? { message: e.deny_message } : {}) });
    case 'user.custom_tool_result':
      return answerCustomTool(store, id, e.custom_tool_use_id, (e.content ?? []).map((b) => b.text).join('\n'), e.is_error === true);
    case 'user.define_outcome':
      return defineOutcome(store, id, {
        description: e.description,
        ...(e.rubric ? { rubric: e.rubric.content } : {}),
        ...(e.check !== undefined ? { check: e.check } : {}),
        ...(e.max_iterations != null ? { maxIterations: e.max_iterations } : {}),
        ...(e.files ? { files: e.files } : {}),
      });
    case 'user.escalation_answer':
      return resolveEscalation(store, id, e.escalation_id, e.pick !== undefined ? { pick: e.pick } : { message: e.message as string });
  }
}

/** Appends the events in order (see the module comment); returns them as written. */
export function appendEvents(store: SessionStore, id: string, events: readonly EventParams[], traceparent: string | null = null): SessionEvent[] {
  const written: SessionEvent[] = [];
  events.forEach((e, i) => {
    try {
      written.push(appendOne(store, id, e, traceparent));
    } catch (err) {
      if (!OpenboaError.is(err) || err.code !== 'invalid_input') throw err;
      const mapped = fromCoreError(err) as ApiError;
      const done = written.length ? ` (events 0 to ${written.length - 1} were appended)` : '';
      throw invalidRequest(`events.${i}: ${mapped.message}${done}`);
    }
  });
  return written;
}
