/**
 * W3C trace context (https://www.w3.org/TR/trace-context/) as this project
 * carries it: the `traceparent` of a user.message (schema/events.ts), which
 * the run that takes it in joins, and the one a parent's run puts on a
 * child's task. The HTTP API joins a request's `traceparent` header with
 * withTraceparent() when it appends the request's event.
 */
import { TraceFlags, type SpanContext } from '@opentelemetry/api';
import { runSlot } from '../run/run-state.js';

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** The span context a traceparent names; null for one that is malformed, all zeros, or of version ff. */
export function parseTraceparent(value: string | null | undefined): SpanContext | null {
  const m = TRACEPARENT.exec(value?.trim().toLowerCase() ?? '');
  if (!m) return null;
  const [, version, traceId, spanId, flags] = m as unknown as [string, string, string, string, string];
  if (version === 'ff' || /^0+$/.test(traceId) || /^0+$/.test(spanId)) return null;
  return { traceId, spanId, traceFlags: parseInt(flags, 16) & TraceFlags.SAMPLED, isRemote: true };
}

/** The traceparent of a span context (version 00). */
export function formatTraceparent(sc: SpanContext): string {
  return `00-${sc.traceId}-${sc.spanId}-${(sc.traceFlags & TraceFlags.SAMPLED) === TraceFlags.SAMPLED ? '01' : '00'}`;
}

/**
 * The event to append, joined to the caller's trace: `header` is the
 * request's `traceparent` header (as the HTTP server received it). Only a
 * user.message carries one; a malformed or absent header, or an event that
 * already names its own, leaves the event as it is (trace context is a hint,
 * never a reason to refuse a request).
 */
export function withTraceparent<E extends { type: string; traceparent?: string }>(event: E, header: string | null | undefined): E {
  if (event.type !== 'user.message' || event.traceparent !== undefined) return event;
  const sc = parseTraceparent(header);
  return sc ? { ...event, traceparent: formatTraceparent(sc) } : event;
}

/**
 * The run's own trace context, for the delegation tools to put on a child's
 * task (tools/delegation-tools.ts) so the child's run links to this one.
 * Set by the run's tracer when its invoke_agent span starts; null without tracing.
 */
export const runTraceSlot = runSlot('run trace context', () => ({ traceparent: null as string | null }));
