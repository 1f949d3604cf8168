/**
 * The Harness: the bounded loop of one run (SPEC §6 step 5). Each turn:
 * rebuild the conversation from the log, call the model, append what it said
 * in one write (so a crash never leaves half a reply), run the tools it is
 * allowed to run, append their results. It ends when the model stops asking
 * for tools, when a tool needs a person (requires_action), or when a limit,
 * an error or an abort ends it. Failures end the loop as data; it does not
 * throw for anything the model or a tool does.
 */
import { iso } from '../clock.js';
import { cacheReadShare, type NewEvent, type SessionEvent, type SessionSnapshot, type StopReason } from '../schema/index.js';
import { ModelError, type ModelRequest, type ModelResponse } from '../model/provider.js';
import { awaitsModel } from './conversation.js';
import { fitWindow } from './fit-window.js';
import { systemPrompt } from './system-prompt.js';
import { backoffMs } from './backoff.js';
import { createdAtOf } from './plan.js';
import { wellFormed, wellFormedDeep } from '../text-cut.js';
import type { RunState } from './run-state.js';
import { totalTokens } from '../store/fold.js';

/** How a run ends, before wake() writes it down. */
export type Ending =
  | { kind: 'idle'; stop: StopReason; details?: { category: string | null; explanation: string | null } | null; terminalError?: boolean }
  | { kind: 'rescheduled'; reason: string; retryAt: string }
  | { kind: 'interrupted' }
  | { kind: 'lease_lost' };

type ToolUseEvent = Extract<SessionEvent, { type: 'agent.tool_use' }>;

/** Ends the run after an abort, the way its reason asks. */
export function endingForAbort(run: RunState): Ending | null {
  const why = run.abortReason();
  if (!why) return null;
  switch (why.kind) {
    case 'interrupt':
      return { kind: 'interrupted' };
    case 'lease_lost':
    case 'log_refused':
      return { kind: 'lease_lost' };
    case 'shutdown':
      return { kind: 'rescheduled', reason: 'shutdown', retryAt: iso(run.rt.deps.clock.now()) };
    case 'deadline':
      error(run, { type: 'unknown_error', code: 'wake_time_limit', message: `the run reached max_wake_seconds (${why.seconds} s) and was stopped`, retry: 'exhausted' });
      return { kind: 'idle', stop: { type: 'retries_exhausted' } };
  }
}

export function error(run: RunState, e: { type: Extract<NewEvent, { type: 'session.error' }>['error']['type']; code: string; message: string; retry: 'retrying' | 'exhausted' | 'terminal' }) {
  run.emit([{ type: 'session.error', error: { type: e.type, code: e.code, message: e.message, retry_status: { type: e.retry } } }]);
  run.errors.push(run.env.redactor.text(e.message));
}

function budgetOf(run: RunState): number | null {
  const o = run.startSnapshot.overrides.session_token_budget;
  return o !== undefined ? o : run.agent.def.limits.session_token_budget;
}

/** An identical call this many times in one run gets a warning with its result... */
export const REPEAT_WARN = 3;
/** ...and this many times ends the run (retries_exhausted). */
export const REPEAT_STOP = 5;
/** Empty replies in a row that end the run. */
export const EMPTY_STOP = 3;

/** JSON with sorted keys, so {a,b} and {b,a} are the same call. */
function stableJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stableJson).join(',')}]`;
  if (v && typeof v === 'object') return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${stableJson((v as Record<string, unknown>)[k])}`).join(',')}}`;
  return JSON.stringify(v);
}

/**
 * Mid-run steering: user messages appended during the run are taken into it
 * at the next model request, listed in a continuation session.status_running
 * (so they enter the conversation there, once). An interrupt appended during
 * the run stops it, daemon or not.
 */
function steer(run: RunState): SessionSnapshot {
  const s = run.rt.store.snapshot(run.sessionId, { persist: false });
  if (s.pending_events.some((p) => p.type === 'user.interrupt')) {
    run.abort({ kind: 'interrupt' });
    return s;
  }
  const take = s.pending_events.filter((p) => p.type === 'user.message' || p.type === 'user.define_outcome');
  if (take.length) {
    run.emit([{ type: 'session.status_running', wake_id: run.runId, trigger: run.trigger, processed_event_ids: take.map((p) => p.id), ...createdAtOf(take), continuation: true }]);
    // The window reads no further than the fold: fold the record that takes them in.
    return run.rt.store.snapshot(run.sessionId, { persist: false });
  }
  return s;
}

/** Runs one tool use that is allowed to run and appends its result. */
export async function runTool(run: RunState, use: ToolUseEvent, note?: string): Promise<void> {
  run.toolCalls += 1;
  const out = await run.catalog.execute(use.name, use.input, {
    sessionId: run.sessionId,
    wakeId: run.runId,
    toolUseId: use.id,
    clock: run.rt.deps.clock,
    store: run.rt.store,
    sandbox: run.sandbox,
    redactor: run.env.redactor,
    skills: run.skills,
    shellTimeoutMs: run.environment.def.shell.timeout_seconds * 1000,
    outputLimitChars: run.environment.def.shell.output_limit_chars,
    signal: run.controller.signal,
  });
  const text = note ? `${out.text}\n\n${note}` : out.text;
  run.emit([{ type: 'agent.tool_result', tool_use_id: use.id, content: [{ type: 'text', text }], is_error: out.isError }]);
}

/** The events one model reply becomes, in block order, ending with the span's end. */
function replyEvents(run: RunState, res: ModelResponse, startId: string): NewEvent[] {
  const out: NewEvent[] = [];
  for (const b of res.content) {
    if (b.type === 'text') {
      if (b.text !== '') out.push({ type: 'agent.message', content: [{ type: 'text', text: b.text }] });
    } else if (b.type === 'thinking') out.push({ type: 'agent.thinking', thinking: b.thinking, signature: b.signature });
    else if (b.type === 'redacted_thinking') out.push({ type: 'agent.thinking', redacted_data: b.data });
    else {
      const ev = run.catalog.evaluate(b.name);
      if (ev.kind === 'custom') out.push({ type: 'agent.custom_tool_use', name: b.name, input: b.input, model_tool_use_id: b.id });
      else out.push({ type: 'agent.tool_use', name: b.name, input: b.input, model_tool_use_id: b.id, evaluated_permission: ev.permission });
    }
  }
  out.push({ type: 'span.model_request_end', model_request_start_id: startId, is_error: false, model_usage: res.usage, cache_read_share: cacheReadShare(res.usage) });
  return out;
}

export async function runHarness(run: RunState): Promise<Ending> {
  const limits = run.agent.def.limits;
  for (;;) {
    // One fold per step: for steering, and for the pending revisits the prompt lists.
    const snap = steer(run);
    const aborted = endingForAbort(run);
    if (aborted) return aborted;

    run.window.refresh(snap);
    const conv = run.window.builder.view();
    if (!awaitsModel(conv.messages)) return { kind: 'idle', stop: { type: 'end_turn' } };

    const budget = budgetOf(run);
    const spent = totalTokens(run.startSnapshot) + run.usage.input_tokens + run.usage.output_tokens;
    if (budget !== null && spent >= budget) {
      error(run, { type: 'unknown_error', code: 'session_token_budget', message: `the session spent ${spent} tokens of its budget of ${budget}; raise session_token_budget to go on`, retry: 'exhausted' });
      return { kind: 'idle', stop: { type: 'budget_reached' } };
    }
    if (run.usage.model_requests >= limits.max_model_requests_per_wake) {
      error(run, { type: 'tool_use_limit_reached_error', code: 'max_model_requests_per_wake', message: `the run made ${run.usage.model_requests} model requests, the limit (max_model_requests_per_wake); send a message to go on`, retry: 'exhausted' });
      return { kind: 'idle', stop: { type: 'retries_exhausted' } };
    }

    // Well-formed like every text of the request: revisit reasons come from hand-written lines.
    // The same for every request of the session: what changes per run is in its user turn (runContext).
    const system = wellFormed(
      systemPrompt({
        system: run.agent.def.system,
        instructions: run.agent.instructions,
        skills: run.skills,
        facts: { sessionId: run.sessionId, agentId: run.agent.id, environmentId: run.environment.id, env: run.env },
      }),
    );
    const tools = wellFormedDeep(run.catalog.offered);
    const messages = fitWindow(run, { conv, system, tools, reported: snap.reported });
    const req: ModelRequest = { model: run.agent.def.model, system, messages, tools, max_tokens: limits.max_output_tokens };

    const [start] = run.emit([{ type: 'span.model_request_start' }]);
    run.usage.model_requests += 1;
    let res: ModelResponse;
    try {
      res = await run.provider.complete(req, run.controller.signal);
    } catch (e) {
      const err = e instanceof ModelError ? e : new ModelError({ message: (e as Error).message, errorType: 'unknown_error', code: 'unexpected', retryable: true });
      run.emit([{ type: 'span.model_request_end', model_request_start_id: (start as SessionEvent).id, is_error: true, model_usage: { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 } }]);
      const ab = endingForAbort(run);
      if (ab) return ab;
      if (err.retryable) {
        const retryAt = iso(run.rt.deps.clock.now() + backoffMs(run.startSnapshot.consecutive_failures, run.rt.deps.random));
        error(run, { type: err.errorType, code: err.code, message: err.message, retry: 'retrying' });
        return { kind: 'rescheduled', reason: `${err.code}: ${err.message}`, retryAt };
      }
      error(run, { type: err.errorType, code: err.code, message: err.message, retry: 'terminal' });
      return { kind: 'idle', stop: { type: 'retries_exhausted' }, terminalError: true };
    }
    for (const k of ['input_tokens', 'output_tokens', 'cache_creation_input_tokens', 'cache_read_input_tokens'] as const) run.usage[k] += res.usage[k];

    const written = run.emit(replyEvents(run, res, (start as SessionEvent).id));
    if (res.stop_reason === 'refusal') {
      closeUnrun(run, written, 'not run: the model refused');
      return { kind: 'idle', stop: { type: 'refusal' }, details: res.stop_details ?? { category: null, explanation: null } };
    }
    if (res.stop_reason === 'max_tokens') {
      closeUnrun(run, written, 'not run: the reply was cut off at max_output_tokens');
      error(run, { type: 'unknown_error', code: 'max_output_tokens', message: `the reply reached max_output_tokens (${limits.max_output_tokens}) and was cut off; send a message to go on, or raise limits.max_output_tokens`, retry: 'exhausted' });
      return { kind: 'idle', stop: { type: 'retries_exhausted' } };
    }

    const uses = written.filter((e) => e.type === 'agent.tool_use' || e.type === 'agent.custom_tool_use');
    const said = written.some((e) => (e.type === 'agent.message' && e.content.some((b) => b.text.trim() !== '')) || e.type === 'agent.thinking');
    if (uses.length === 0 && !said) {
      run.emptyReplies += 1;
      if (run.emptyReplies >= EMPTY_STOP) {
        error(run, { type: 'unknown_error', code: 'empty_replies', message: `the model gave ${run.emptyReplies} empty replies in a row; the run stops here (send a message to go on)`, retry: 'exhausted' });
        return { kind: 'idle', stop: { type: 'retries_exhausted' } };
      }
      continue; // ask again: an empty reply says nothing
    }
    run.emptyReplies = 0;

    // Refused calls get their error result at once; allowed ones run in order.
    const asks: string[] = [];
    let repeated: ToolUseEvent | null = null;
    for (const e of written) {
      if (e.type === 'agent.custom_tool_use') asks.push(e.id);
      if (e.type !== 'agent.tool_use') continue;
      if (e.evaluated_permission === 'ask') {
        asks.push(e.id);
        continue;
      }
      if (e.evaluated_permission === 'deny') {
        const ev = run.catalog.evaluate(e.name);
        run.emit([{ type: 'agent.tool_result', tool_use_id: e.id, content: [{ type: 'text', text: ev.kind === 'deny' ? ev.why : 'not allowed' }], is_error: true }]);
        continue;
      }
      if (run.controller.signal.aborted || repeated) {
        const why = repeated ? `not run: the run stopped at a repeated call of ${repeated.name}` : 'not run: the run was stopped first';
        run.emit([{ type: 'agent.tool_result', tool_use_id: e.id, content: [{ type: 'text', text: why }], is_error: true }]);
        continue;
      }
      const key = `${e.name}\u0000${stableJson(e.input)}`;
      const n = (run.callCounts.get(key) ?? 0) + 1;
      run.callCounts.set(key, n);
      if (n >= REPEAT_STOP) {
        repeated = e;
        run.emit([{ type: 'agent.tool_result', tool_use_id: e.id, content: [{ type: 'text', text: `not run: this is call number ${n} of ${e.name} with the same input in this run` }], is_error: true }]);
        continue;
      }
      const warn = n >= REPEAT_WARN ? `[openboa: this is call number ${n} of ${e.name} with exactly this input in this run; at ${REPEAT_STOP} the run stops. If it is not getting you anywhere, try something else.]` : undefined;
      await runTool(run, e, warn);
    }
    if (repeated) {
      // Asks of this reply are not left open: the run is over, and an open ask would hold back the next message.
      if (asks.length) run.emit(asks.map((id) => ({ type: 'agent.tool_result' as const, tool_use_id: id, content: [{ type: 'text' as const, text: `not asked: the run stopped at a repeated call of ${(repeated as ToolUseEvent).name}` }], is_error: true })));
      error(run, { type: 'tool_use_limit_reached_error', code: 'repeated_tool_call', message: `${repeated.name} was called ${REPEAT_STOP} times with the same input in one run; the run stops here (send a message to go on)`, retry: 'exhausted' });
      return { kind: 'idle', stop: { type: 'retries_exhausted' } };
    }
    if (asks.length) return { kind: 'idle', stop: { type: 'requires_action', event_ids: asks } };
    if (uses.length === 0) return { kind: 'idle', stop: { type: 'end_turn' } };
  }
}

/** Gives every tool use of a reply that will not run an error result. */
function closeUnrun(run: RunState, written: SessionEvent[], why: string) {
  const uses = written.filter((e) => e.type === 'agent.tool_use' || e.type === 'agent.custom_tool_use');
  if (uses.length) run.emit(uses.map((u) => ({ type: 'agent.tool_result' as const, tool_use_id: u.id, content: [{ type: 'text' as const, text: why }], is_error: true })));
}
