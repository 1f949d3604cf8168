/**
 * The loop of one run (SPEC §6 step 5). Each step:
 *
 *   steering.poll  → what arrived mid-run is taken in (or the run aborts)
 *   context.rebuild → the conversation from the log; null ends the turn
 *   bounds          → the limits of the run (a token budget, a request cap)
 *   context.fit     → system, tools and messages for this request
 *   model.complete  → the reply, recorded in one write (a crash never
 *                     leaves half a reply)
 *   tools           → each call filed by the tool policy: denied ones get
 *                     their error at once, allowed ones run in order
 *                     (policy.beforeCall may refuse or halt), asks wait
 *   afterTurn hooks → may end the run, or ask the model again; asked with
 *                     no turn when the rebuilt conversation has nothing
 *                     for the model (the turn was already over)
 *   observers       → see each step, request, reply text (as it streams) and tool call, and change nothing
 *
 * It ends when the model stops asking for tools, when a tool needs a person
 * (requires_action), or when a limit, an error or an abort ends it.
 * Failures end the loop as data in the journal; it does not throw for
 * anything the model or a tool does. The hooks are documented in
 * loop-hooks.ts; the loop owns only their order.
 */
import { iso } from '../foundation/clock.js';
import { cacheReadShare, type NewEvent, type SessionEvent } from '../schema/index.js';
import { ModelError, type ModelRequest, type ModelResponse } from '../model/provider.js';
import { observe, type LoopHooks, type Turn, type TurnVerdict } from './loop-hooks.js';
import { toolUseView } from '../kinds/index.js';
import type { RunJournal } from './journal.js';
import type { Ending, RunContext } from './run-context.js';
import { runTool } from './tool-policy.js';
import { replyPreview, type ReplyPreview } from './reply-preview.js';
import { modelRequestStart, requestSettings } from './model-choice.js';
import { requestCost } from '../definitions/pricing.js';

const NO_USAGE = { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };

/** Ends the run after an abort, the way its reason asks; null when not aborted. */
export function endingForAbort(ctx: RunContext, journal: RunJournal): Ending | null {
  const why = ctx.control.reason();
  if (!why) return null;
  switch (why.kind) {
    case 'interrupt':
      return { kind: 'interrupted' };
    case 'paused':
      return { kind: 'idle', stop: { type: 'end_turn' } };
    case 'lease_lost':
    case 'log_refused':
      return { kind: 'lease_lost' };
    case 'shutdown':
      return { kind: 'rescheduled', reason: 'shutdown', retryAt: iso(ctx.rt.deps.clock.now()) };
    case 'deadline':
      journal.error({ code: 'wake_time_limit', message: `the run reached max_wake_seconds (${why.seconds} s) and was stopped`, retry: 'exhausted' });
      return { kind: 'idle', stop: { type: 'retries_exhausted' } };
  }
}

export async function runLoop(ctx: RunContext, journal: RunJournal, hooks: LoopHooks): Promise<Ending> {
  let overWithoutTurn = 0;
  for (let n = 1; ; n++) {
    observe(hooks.observers, (o) => o.step?.(ctx, n));
    // One fold per step: for steering, and for what the context reads.
    const snap = hooks.steering.poll(ctx, journal);
    const aborted = endingForAbort(ctx, journal);
    if (aborted) return aborted;

    const conv = hooks.context.rebuild(ctx, snap);
    if (!conv) {
      // Nothing for the model: the agent's turn is over. The hooks may still act on it (grade it), once more at most.
      const verdict = overWithoutTurn++ < 2 ? await afterTurn(ctx, journal, hooks, null) : undefined;
      if (verdict && 'end' in verdict) return verdict.end;
      if (verdict && 'continue' in verdict) continue;
      return { kind: 'idle', stop: { type: 'end_turn' } };
    }
    overWithoutTurn = 0;
    const bound = bounds(ctx, journal, hooks);
    if (bound) return bound;

    const fitted = await hooks.context.fit(ctx, journal, conv, snap);
    // A summary request may have been cut short: end the way the abort asks, before asking the model.
    const stopped = endingForAbort(ctx, journal);
    if (stopped) return stopped;
    const req: ModelRequest = { ...requestSettings(ctx), ...fitted };
    const reply = await ask(ctx, journal, hooks, req);
    if ('ending' in reply) return reply.ending;

    const turn = await settleTurn(ctx, journal, hooks, reply.written);
    if ('ending' in turn) return turn.ending;
    const verdict = await afterTurn(ctx, journal, hooks, turn);
    if (verdict && 'end' in verdict) return verdict.end;
    if (turn.empty || verdict) continue; // an empty reply says nothing: ask again
    if (turn.asks.length) return { kind: 'idle', stop: { type: 'requires_action', event_ids: [...turn.asks] } };
    if (turn.uses.length === 0) return { kind: 'idle', stop: { type: 'end_turn' } };
  }
}

/** The after-turn hooks in order: the first `end` wins; `continue` from any asks the model again. */
async function afterTurn(ctx: RunContext, journal: RunJournal, hooks: LoopHooks, turn: Turn | null): Promise<TurnVerdict> {
  let again = false;
  // One fold after the turn, shared by every hook (loop-hooks.ts).
  const snap = ctx.rt.store.snapshot(ctx.sessionId, { persist: false });
  for (const h of hooks.afterTurn) {
    const verdict = await h.afterTurn(ctx, journal, turn, snap);
    if (verdict && 'end' in verdict) return verdict;
    if (verdict && 'continue' in verdict) again = true;
  }
  return again ? { continue: true } : undefined;
}

/** The bounds in order (loop-hooks.ts): the first ending wins. */
function bounds(ctx: RunContext, journal: RunJournal, hooks: LoopHooks): Ending | null {
  for (const b of hooks.bounds) {
    const ending = b.check(ctx, journal);
    if (ending) return ending;
  }
  return null;
}

/** One model request inside its span; the reply as written, or how the run ends. */
async function ask(ctx: RunContext, journal: RunJournal, hooks: LoopHooks, req: ModelRequest): Promise<{ written: SessionEvent[] } | { ending: Ending }> {
  const [start] = journal.emit([modelRequestStart(ctx, req)]);
  const startId = (start as SessionEvent | undefined)?.id ?? '';
  journal.countRequest();
  observe(hooks.observers, (o) => o.request?.(ctx, req));
  const asked = ctx.rt.deps.clock.now();
  const preview = replyPreview(ctx, hooks);
  let res: ModelResponse;
  try {
    res = await hooks.model.complete(req, ctx.control.signal, preview?.sink);
  } catch (e) {
    const err = e instanceof ModelError ? e : new ModelError({ message: (e as Error).message, errorType: 'unknown_error', code: 'unexpected', retryable: true });
    observe(hooks.observers, (o) => o.reply?.(ctx, req, { error: err }, ctx.rt.deps.clock.now() - asked));
    journal.emit([{ type: 'span.model_request_end', model_request_start_id: startId, is_error: true, model_usage: NO_USAGE, cost_usd: 0 }]);
    const ab = endingForAbort(ctx, journal);
    if (ab) return { ending: ab };
    const f = { type: err.errorType, code: err.code, message: err.message };
    if (err.retryable) return { ending: journal.failedAttempt(ctx.rt, ctx.startSnapshot.consecutive_failures, f) };
    journal.error({ ...f, retry: 'terminal' });
    return { ending: { kind: 'idle', stop: { type: 'retries_exhausted' }, terminalError: true } };
  }
  observe(hooks.observers, (o) => o.reply?.(ctx, req, { response: res }, ctx.rt.deps.clock.now() - asked));
  journal.addUsage(res.usage);
  const written = journal.emit(replyEvents(hooks, res, startId, requestCost(ctx.agent.def, req.model, res.usage), preview));
  const uses = written.filter(isToolUse).map((e) => e.id);
  if (res.stop_reason === 'refusal') {
    journal.toolErrors(uses, 'not run: the model refused');
    return { ending: { kind: 'idle', stop: { type: 'refusal' }, details: res.stop_details ?? { category: null, explanation: null } } };
  }
  if (res.stop_reason === 'max_tokens') {
    journal.toolErrors(uses, 'not run: the reply was cut off at max_output_tokens');
    journal.error({ code: 'max_output_tokens', message: `the reply reached max_output_tokens (${req.max_tokens}) and was cut off; send a message to go on, or raise limits.max_output_tokens`, retry: 'exhausted' });
    return { ending: { kind: 'idle', stop: { type: 'retries_exhausted' } } };
  }
  return { written };
}

/** The events one model reply becomes, in block order, ending with the span's end; a previewed block keeps the id its preview promised. */
function replyEvents(hooks: LoopHooks, res: ModelResponse, startId: string, cost: number, preview: ReplyPreview | null): NewEvent[] {
  const out: NewEvent[] = [];
  for (const [i, b] of res.content.entries()) {
    const promised = preview?.idOf(i);
    const id = promised === undefined ? {} : { id: promised };
    if (b.type === 'text') {
      if (b.text !== '') out.push({ ...id, type: 'agent.message', content: [{ type: 'text', text: b.text }] });
    } else if (b.type === 'thinking') out.push({ ...id, type: 'agent.thinking', thinking: b.thinking, signature: b.signature });
    else if (b.type === 'redacted_thinking') out.push({ type: 'agent.thinking', redacted_data: b.data });
    else {
      const c = hooks.tools.classify(b.name, b.input);
      if (c.kind === 'custom') out.push({ type: 'agent.custom_tool_use', name: b.name, input: b.input, model_tool_use_id: b.id });
      else if (c.record) out.push(c.record({ modelToolUseId: b.id, input: b.input, permission: c.permission }));
      else out.push({ type: 'agent.tool_use', name: b.name, input: b.input, model_tool_use_id: b.id, evaluated_permission: c.permission });
    }
  }
  out.push({ type: 'span.model_request_end', model_request_start_id: startId, is_error: false, model_usage: res.usage, cache_read_share: cacheReadShare(res.usage), cost_usd: cost });
  return out;
}

/**
 * The tool calls of one recorded reply: denied ones get their error result
 * at once, allowed ones run in order as the policy decides, asks wait.
 * A halt closes every call and ask of the reply and ends the run.
 */
async function settleTurn(ctx: RunContext, journal: RunJournal, hooks: LoopHooks, written: SessionEvent[]): Promise<Turn | { ending: Ending }> {
  const uses = written.filter(isToolUse);
  const said = written.some((e) => (e.type === 'agent.message' && e.content.some((b) => b.text.trim() !== '')) || e.type === 'agent.thinking');
  const asks: string[] = [];
  let halted: Extract<ReturnType<LoopHooks['tools']['beforeCall']>, { kind: 'halt' }> | null = null;
  for (const e of written) {
    if (e.type === 'agent.custom_tool_use') asks.push(e.id);
    // A tool use as the policy sees it (a service's, by the name the model called it); null: not one to run.
    const view = toolUseView(e);
    if (!view) continue;
    if (view.evaluated_permission === 'ask') {
      asks.push(e.id);
      continue;
    }
    if (view.evaluated_permission === 'deny') {
      journal.toolErrors([e.id], hooks.tools.refusal(view.name, view.input));
      continue;
    }
    if (halted || ctx.control.signal.aborted) {
      journal.toolErrors([e.id], halted ? halted.notRun : 'not run: the run was stopped first');
      continue;
    }
    const decision = hooks.tools.beforeCall(view);
    if (decision.kind === 'halt') {
      halted = decision;
      journal.toolErrors([e.id], decision.result);
    } else if (decision.kind === 'refuse') journal.toolErrors([e.id], decision.result);
    else {
      observe(hooks.observers, (o) => o.toolStart?.(ctx, e));
      const started = ctx.rt.deps.clock.now();
      const result = await runTool(ctx, journal, e, hooks.tools.executor(e), decision.note);
      observe(hooks.observers, (o) => o.toolCall?.(ctx, e, result, ctx.rt.deps.clock.now() - started));
    }
  }
  if (halted) {
    // Asks of this reply are not left open: the run is over, and an open ask would hold back the next message.
    journal.toolErrors(asks, halted.notAsked);
    journal.error(halted.error);
    return { ending: { kind: 'idle', stop: { type: 'retries_exhausted' } } };
  }
  return { written, uses, asks, empty: uses.length === 0 && !said };
}

/** A tool use of any kind: built-in, a service's (MCP) or custom. */
function isToolUse(e: SessionEvent): boolean {
  return e.type === 'agent.custom_tool_use' || toolUseView(e) !== null;
}
