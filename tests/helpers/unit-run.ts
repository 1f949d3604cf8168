/**
 * The in-process bench of the loop's unit tests: a temp home with agents
 * written from plain objects, a model port (queued replies, or one the test
 * builds), the memory sandbox, a manual clock, and the real store. Tests
 * call wake() through `run` and read the log back as parsed events.
 */
import type { TestContext } from 'node:test';
import YAML from 'yaml';
import { SessionStore } from '../../src/core/store/session-store.js';
import { createSession } from '../../src/core/ops/create-session.js';
import { wake } from '../../src/core/run/wake.js';
import type { Runtime } from '../../src/core/run/run-context.js';
import type { WakeOptions } from '../../src/core/run/wake-api.js';
import { readLines } from '../../src/core/store/jsonl.js';
import { parseEventLine } from '../../src/core/store/parse-line.js';
import type { SessionEvent } from '../../src/core/schema/index.js';
import type { ModelProvider } from '../../src/core/model/provider.js';
import type { Sandbox } from '../../src/core/sandbox/sandbox.js';
import { tempHome } from './home.js';
import { testDeps } from './deps.js';
import { queuedModel, type Reply } from './queued-model.js';
import { MemorySandbox } from '../../src/core/sandbox/memory-sandbox.js';

/** What every unit agent is unless the test says otherwise. */
export const UNIT_AGENT = { provider: 'anthropic', model: 'unit-model', system: 'You are a unit test.', environment: 'local' } as const;

export interface UnitRunOptions {
  /** Agents by id, each over UNIT_AGENT (default: one agent `unit`). */
  agents?: Record<string, Record<string, unknown>>;
  /** The model's replies, in order (a queued model); or `model`. */
  replies?: Reply[];
  /** A model the test built itself (registered as `anthropic`). */
  model?: ModelProvider;
  /** The run's sandbox (default: an empty MemorySandbox per run). */
  sandbox?: () => Sandbox;
}

export function unitRun(t: TestContext, o: UnitRunOptions = {}) {
  const h = tempHome(t);
  for (const [id, a] of Object.entries(o.agents ?? { unit: {} })) h.write(`agents/${id}/agent.yaml`, YAML.stringify({ ...UNIT_AGENT, ...a }));
  const queued = o.model ? null : queuedModel(o.replies ?? []);
  const models = queued ? queued.registry : { anthropic: () => o.model! };
  const deps = { ...testDeps({}), models, sandbox: o.sandbox ?? (() => new MemorySandbox()) };
  const store = new SessionStore(h.home, deps);
  const rt: Runtime = { home: h.home, store, deps };
  /** The log of a session, parsed (malformed lines left out). */
  const events = (id: string): SessionEvent[] =>
    readLines(store.paths(id).events)
      .lines.map((l) => parseEventLine(l, deps.clock.now()))
      .flatMap((r) => (r.kind === 'event' ? [r.event] : []));
  return {
    h,
    deps,
    store,
    rt,
    /** The queued model (its requests, what is left); null when the test passed its own. */
    model: queued,
    events,
    newSession: (agent = 'unit', more: { parentSessionId?: string } = {}) => createSession(store, { agent, ...more }).id,
    run: (id: string, w?: WakeOptions) => wake(rt, id, w),
  };
}
