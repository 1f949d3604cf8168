/**
 * The default tool policy (a ToolPolicy of the loop): the agent's
 * permissions from its tool catalog, and a guard against a call repeated
 * with the same input in one run. Also runTool(), the one place a tool call
 * that is allowed to run is executed and its result recorded (by the loop,
 * and by the settling of confirmed calls).
 */
import { egressAccess } from '../egress/egress-access.js';
import type { ToolCatalog } from '../tools/catalog.js';
import { malformedArguments, malformedInputError } from '../tools/tool-arguments.js';
import type { CallDecision, ToolExecutor, ToolPolicy, ToolUseEvent } from './loop-hooks.js';
import type { RunJournal } from './journal.js';
import type { SessionEvent } from '../schema/index.js';
import type { RunContext } from './run-context.js';
import { runTraceSlot } from '../telemetry/traceparent.js';

/** An identical call this many times in one run gets a warning with its result... */
export const REPEAT_WARN = 3;
/** ...and this many times ends the run (retries_exhausted). */
export const REPEAT_STOP = 5;

/** JSON with sorted keys, so {a,b} and {b,a} are the same call. */
function stableJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stableJson).join(',')}]`;
  if (v && typeof v === 'object') return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${stableJson((v as Record<string, unknown>)[k])}`).join(',')}}`;
  return JSON.stringify(v);
}

/**
 * Counts identical calls (name and input, key order aside) within one run:
 * from REPEAT_WARN on the result carries a warning, and at REPEAT_STOP the
 * call is not run and the run halts. Its counts live in the closure, which
 * is built fresh for each run.
 */
export function repeatGuard(): (use: ToolUseEvent) => CallDecision {
  const counts = new Map<string, number>();
  return (use) => {
    const key = `${use.name}\u0000${stableJson(use.input)}`;
    const n = (counts.get(key) ?? 0) + 1;
    counts.set(key, n);
    if (n >= REPEAT_STOP) {
      return {
        kind: 'halt',
        result: `not run: this is call number ${n} of ${use.name} with the same input in this run`,
        notRun: `not run: the run stopped at a repeated call of ${use.name}`,
        notAsked: `not asked: the run stopped at a repeated call of ${use.name}`,
        error: { type: 'tool_use_limit_reached_error', code: 'repeated_tool_call', message: `${use.name} was called ${REPEAT_STOP} times with the same input in one run; the run stops here (send a message to go on)`, retry: 'exhausted' },
      };
    }
    if (n >= REPEAT_WARN) return { kind: 'run', note: `[openboa: this is call number ${n} of ${use.name} with exactly this input in this run; at ${REPEAT_STOP} the run stops. If it is not getting you anywhere, try something else.]` };
    return { kind: 'run' };
  };
}

/**
 * The agent's permissions (its catalog) plus the repeat guard. A call whose
 * arguments were not valid JSON (tool-arguments.ts) is denied whatever the
 * tool, custom ones included: nobody is asked to confirm, and no client is
 * handed, a call that cannot be read; its error result tells the model why.
 */
export function catalogPolicy(catalog: ToolCatalog): ToolPolicy {
  const guard = repeatGuard();
  return {
    classify(name, input) {
      if (malformedArguments(input) !== null) return { kind: 'tool', permission: 'deny' };
      const ev = catalog.evaluate(name);
      if (ev.kind === 'custom') return { kind: 'custom' };
      const target = ev.mcp;
      return { kind: 'tool', permission: ev.permission, ...(target ? { record: (call) => catalog.record(target, call) } : {}) };
    },
    refusal(name, input) {
      const text = malformedArguments(input);
      if (text !== null) return malformedInputError(name, text);
      const ev = catalog.evaluate(name);
      return ev.kind === 'deny' ? ev.why : 'not allowed';
    },
    beforeCall: guard,
    permitsNow(name) {
      const ev = catalog.evaluate(name);
      return ev.kind === 'deny' ? { ok: false, why: ev.why } : { ok: true };
    },
    executor(use) {
      // A call of a tool a service brings runs through that service (an MCP server); a built-in through the catalog.
      const source = catalog.sourceOf(use);
      return source ? (ctx, journal, u) => source.execute(ctx, journal, u) : runBuiltin;
    },
  };
}

/** Runs one tool use that is allowed to run and records its result (with `note` after it). */
/**
 * Runs one allowed (or confirmed) call through `execute` (the tool policy's
 * executor for it) and records its result, with `note` after it.
 */
export async function runTool(ctx: RunContext, journal: RunJournal, use: SessionEvent, execute: ToolExecutor, note?: string): Promise<{ text: string; isError: boolean }> {
  journal.countToolCall();
  const out = await execute(ctx, journal, use);
  journal.toolResult(use.id, note ? `${out.text}\n\n${note}` : out.text, out.isError);
  return out;
}

/** The executor of a built-in tool: the catalog validates and runs it. */
const runBuiltin: ToolExecutor = (ctx, journal, e) => {
  const use = e as ToolUseEvent;
  return ctx.catalog.execute(use.name, use.input, {
    sessionId: ctx.sessionId,
    wakeId: ctx.runId,
    toolUseId: use.id,
    clock: ctx.rt.deps.clock,
    store: ctx.rt.store,
    sandbox: ctx.sandbox,
    redactor: ctx.env.redactor,
    skills: ctx.skills,
    shellTimeoutMs: ctx.environment.def.shell.timeout_seconds * 1000,
    outputLimitChars: ctx.environment.def.shell.output_limit_chars,
    signal: ctx.control.signal,
    agent: { id: ctx.agent.id, def: ctx.agent.def },
    emit: (events) => journal.emit(events),
    ...(journal.openedAt ? { runOpenedAt: journal.openedAt } : {}),
    ...traceOf(ctx),
    // Up to this call: the calls of one reply are all written before the first runs.
    runUses: (name) => {
      let n = 0;
      for (const w of journal.written) {
        if (w.type === 'agent.tool_use' && w.name === name) n += 1;
        if (w.id === use.id) break;
      }
      return n;
    },
    processEnv: ctx.rt.deps.env,
    // Built only for the one tool that uses it.
    ...(use.name === 'web_fetch' ? { egress: egressAccess({ def: ctx.environment.def, mcpServers: ctx.agent.def.mcp_servers, network: ctx.rt.deps.network, runtimeDir: ctx.paths.runtime, redactor: ctx.env.redactor }) } : {}),
  });
};

/** The run's trace context for its tools, when it is traced. */
function traceOf(ctx: RunContext): { traceparent?: string } {
  const tp = ctx.state.get(runTraceSlot).traceparent;
  return tp ? { traceparent: tp } : {};
}
