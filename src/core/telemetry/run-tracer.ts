/**
 * A run as OpenTelemetry spans, in the GenAI semantic conventions
 * (docs/observability.md lists every span and attribute):
 *
 *   invoke_agent {agent}           the run (INTERNAL), under the caller's trace
 *   ├─ await_confirmation {tool}   a confirmation this run took in: from the ask to the answer
 *   ├─ chat {model}                each model request (CLIENT)
 *   ├─ execute_tool {tool}         each tool call that ran
 *   └─ evaluate_outcome            each outcome evaluation (span.outcome_evaluation_*)
 *
 * with span events on the run for compactions, errors and retries, and the
 * children it spawned. A child's run links to its parent's run (the task
 * carries the parent's traceparent); a caller's traceparent on the message
 * a run takes in makes the run a child of the caller's span.
 *
 * Times are the injected clock's. Contents (messages, tool arguments and
 * results) only with captureContent, redacted with the run's Redactor. A
 * RunObserver: never throws into the run, writes nothing.
 */
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Link, type Span, type Tracer } from '@opentelemetry/api';
import type { SessionEvent } from '../schema/index.js';
import type { RunObserver } from '../run/loop-hooks.js';
import type { RunContext } from '../run/run-context.js';
import { toolUseView } from '../kinds/index.js';
import { formatTraceparent, parseTraceparent, runTraceSlot } from './traceparent.js';
import { outcomeLabel } from './run-metrics.js';

/** Longest content attribute, in characters: a span is not a log, and a collector refuses huge ones. */
const CONTENT_CHARS = 16_000;

export function runTracer(tracer: Tracer, o: { captureContent: boolean }): RunObserver {
  let run: Span | null = null;
  let parent = ROOT_CONTEXT;
  let chat: Span | null = null;
  const tools = new Map<string, Span>();
  const evaluations = new Map<string, Span>();
  /** What this run's requests used (its span.model_request_end events), for the run span's totals. */
  const spent = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };
  const now = (ctx: RunContext) => ctx.rt.deps.clock.now();
  const content = (ctx: RunContext, v: unknown): string => ctx.env.redactor.text(typeof v === 'string' ? v : JSON.stringify(v)).slice(0, CONTENT_CHARS);
  const base = (ctx: RunContext): Attributes => ({ 'gen_ai.provider.name': ctx.agent.def.provider, 'gen_ai.conversation.id': ctx.sessionId });

  return {
    runStart(ctx, plan) {
      const taken = new Set(plan.take.map((p) => p.id));
      const events = ctx.window.recent.filter((l) => taken.has(l.event.id)).map((l) => l.event);
      const from = events.map((e) => (e.type === 'user.message' ? parseTraceparent(e.traceparent) : null)).find((sc) => sc !== null) ?? null;
      // A child's task carries its parent's run: linked (the child works on after the call that spawned it). A caller's: joined.
      const child = ctx.startSnapshot.parent_session_id !== null;
      const links: Link[] = from && child ? [{ context: from, attributes: { 'openboa.link': 'parent_run' } }] : [];
      const caller = from && !child ? trace.setSpanContext(ROOT_CONTEXT, from) : ROOT_CONTEXT;
      run = tracer.startSpan(
        `invoke_agent ${ctx.agent.id}`,
        {
          kind: SpanKind.INTERNAL,
          startTime: now(ctx),
          links,
          attributes: {
            ...base(ctx),
            'gen_ai.operation.name': 'invoke_agent',
            'gen_ai.agent.id': ctx.agent.id,
            'gen_ai.agent.name': ctx.agent.id,
            'gen_ai.request.model': ctx.agent.def.model,
            'openboa.run.id': ctx.runId,
            'openboa.run.trigger': plan.trigger,
            ...(ctx.startSnapshot.parent_session_id ? { 'openboa.parent_session.id': ctx.startSnapshot.parent_session_id } : {}),
          },
        },
        caller,
      );
      parent = trace.setSpan(ROOT_CONTEXT, run);
      ctx.state.get(runTraceSlot).traceparent = formatTraceparent(run.spanContext());
      // Confirmations this run took in: the time the call waited for a person.
      for (const e of events) {
        if (e.type !== 'user.tool_confirmation') continue;
        const use = ctx.window.recent.find((l) => l.event.id === e.tool_use_id)?.event;
        const view = use ? toolUseView(use) : null;
        if (!use || !view) continue;
        tracer
          .startSpan(`await_confirmation ${view.name}`, { startTime: Date.parse(use.created_at), attributes: { 'gen_ai.tool.name': view.name, 'gen_ai.tool.call.id': view.model_tool_use_id ?? use.id, 'openboa.confirmation.result': e.result } }, parent)
          .end(Date.parse(e.created_at));
      }
    },

    events(ctx, events) {
      if (!run) return;
      for (const e of events) seeEvent(run, e);
    },

    request(ctx, req) {
      chat = tracer.startSpan(`chat ${req.model}`, { kind: SpanKind.CLIENT, startTime: now(ctx), attributes: { ...base(ctx), 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': req.model, 'gen_ai.request.max_tokens': req.max_tokens } }, parent);
      if (o.captureContent) {
        chat.setAttribute('gen_ai.system_instructions', content(ctx, req.system));
        chat.setAttribute('gen_ai.input.messages', content(ctx, req.messages));
      }
    },

    reply(ctx, req, outcome) {
      const span = chat;
      chat = null;
      if (!span) return;
      if ('error' in outcome) {
        span.setAttribute('error.type', outcome.error.code);
        span.setStatus({ code: SpanStatusCode.ERROR, message: ctx.env.redactor.text(outcome.error.message) });
      } else {
        const r = outcome.response;
        span.setAttributes({
          'gen_ai.response.model': req.model,
          'gen_ai.response.finish_reasons': [r.stop_reason ?? 'unknown'],
          'gen_ai.usage.input_tokens': r.usage.input_tokens,
          'gen_ai.usage.output_tokens': r.usage.output_tokens,
          'gen_ai.usage.cache_read.input_tokens': r.usage.cache_read_input_tokens,
          'gen_ai.usage.cache_creation.input_tokens': r.usage.cache_creation_input_tokens,
        });
        if (o.captureContent) span.setAttribute('gen_ai.output.messages', content(ctx, r.content));
      }
      span.end(now(ctx));
    },

    toolStart(ctx, use) {
      const view = toolUseView(use);
      const name = view?.name ?? 'unknown';
      const span = tracer.startSpan(`execute_tool ${name}`, { kind: SpanKind.INTERNAL, startTime: now(ctx), attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': name, 'gen_ai.tool.type': 'function', 'gen_ai.tool.call.id': view?.model_tool_use_id ?? use.id } }, parent);
      if (o.captureContent && view) span.setAttribute('gen_ai.tool.call.arguments', content(ctx, view.input));
      tools.set(use.id, span);
    },

    toolCall(ctx, use, result) {
      const span = tools.get(use.id);
      tools.delete(use.id);
      if (!span) return;
      if (result?.isError) {
        span.setAttribute('error.type', 'tool_error');
        span.setStatus({ code: SpanStatusCode.ERROR });
      }
      if (o.captureContent && result) span.setAttribute('gen_ai.tool.call.result', content(ctx, result.text));
      span.end(now(ctx));
    },

    runEnd(ctx, ending, after) {
      if (!run) return;
      const t = now(ctx);
      for (const s of [...tools.values(), ...evaluations.values(), ...(chat ? [chat] : [])]) s.end(t);
      const outcome = outcomeLabel(ending);
      run.setAttributes({
        'openboa.run.outcome': outcome,
        'openboa.session.status': after.status,
        // The run's own usage (its span.model_request_end events), not the session's.
        'gen_ai.usage.input_tokens': spent.input,
        'gen_ai.usage.output_tokens': spent.output,
        'gen_ai.usage.cache_read.input_tokens': spent.cacheRead,
        'gen_ai.usage.cache_creation.input_tokens': spent.cacheWrite,
      });
      if (outcome === 'error' || outcome === 'rescheduled' || outcome === 'lease_lost') run.setStatus({ code: SpanStatusCode.ERROR, message: ending.kind === 'rescheduled' ? ctx.env.redactor.text(ending.reason) : outcome });
      run.end(t);
      run = null;
    },
  };

  /** What the run wrote, on its span: compactions, errors and retries, children, outcome evaluations. */
  function seeEvent(span: Span, e: SessionEvent): void {
    const at = Date.parse(e.created_at);
    switch (e.type) {
      case 'span.model_request_end':
        spent.input += e.model_usage.input_tokens;
        spent.output += e.model_usage.output_tokens;
        spent.cacheRead += e.model_usage.cache_read_input_tokens;
        spent.cacheWrite += e.model_usage.cache_creation_input_tokens;
        break;
      case 'agent.thread_context_compacted':
        span.addEvent('openboa.compaction', { 'openboa.compaction.tokens_before': e.tokens_before, 'openboa.compaction.tokens_after': e.tokens_after }, at);
        break;
      case 'session.error':
        span.addEvent('openboa.session.error', { 'error.type': e.error.code ?? e.error.type, 'openboa.retry_status': e.error.retry_status?.type ?? 'none', ...(o.captureContent ? { 'openboa.error.message': e.error.message } : {}) }, at);
        break;
      case 'session.status_rescheduled':
        span.addEvent('openboa.retry_scheduled', { 'openboa.retry_at': e.retry_at }, at);
        break;
      case 'session.thread_created':
        span.addEvent('openboa.child_session', { 'openboa.child_session.id': e.session_thread_id, 'gen_ai.agent.name': e.agent_name }, at);
        break;
      case 'span.outcome_evaluation_start':
        evaluations.set(e.id, tracer.startSpan('evaluate_outcome', { startTime: at, attributes: { 'openboa.outcome.id': e.outcome_id, 'openboa.outcome.iteration': e.iteration } }, trace.setSpan(ROOT_CONTEXT, span)));
        break;
      case 'span.outcome_evaluation_end': {
        const ev = evaluations.get(e.outcome_evaluation_start_id);
        evaluations.delete(e.outcome_evaluation_start_id);
        if (!ev) break;
        ev.setAttributes({ 'openboa.outcome.result': e.result, 'gen_ai.usage.input_tokens': e.usage.input_tokens, 'gen_ai.usage.output_tokens': e.usage.output_tokens });
        ev.end(at);
        break;
      }
    }
  }
}
