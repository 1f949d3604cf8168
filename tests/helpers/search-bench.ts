/**
 * The in-process search bench shared by the search tests: a temp home with two
 * agents on a secret-bearing environment, the real store, index and tools, the
 * queued model and the memory sandbox.
 */
import type { TestContext } from 'node:test';
import YAML from 'yaml';
import { SessionStore } from '../../src/core/store/session-store.js';
import { createSession } from '../../src/core/ops/create-session.js';
import { loadAgent } from '../../src/core/definitions/definitions.js';
import type { Runtime } from '../../src/core/run/run-context.js';
import { readLines } from '../../src/core/store/jsonl.js';
import { parseEventLine } from '../../src/core/store/parse-line.js';
import type { SessionEvent } from '../../src/core/schema/index.js';
import { SessionSearch } from '../../src/core/search/session-search.js';
import type { ToolContext } from '../../src/core/tools/tool.js';
import { Redactor } from '../../src/core/foundation/redact.js';
import { tempHome } from './home.js';
import { testDeps } from './deps.js';
import { queuedModel, type Reply } from './queued-model.js';
import { MemorySandbox } from '../../src/core/sandbox/memory-sandbox.js';

/** The environment's secret, as the tests expect to never see it. */
export const SECRET = 'sk-live-9f8e7d6c5b4a';

export function searchBench(t: TestContext, opts: { scope?: 'agent' | 'home' } = {}) {
  const h = tempHome(t);
  h.write('environments/vault.yaml', YAML.stringify({ env: { API_KEY: { secret: { env: 'UNIT_SECRET' } } } }));
  const agent = (id: string, scope: 'agent' | 'home' = 'agent') =>
    h.write(`agents/${id}/agent.yaml`, YAML.stringify({ provider: 'anthropic', model: 'unit-model', system: 'You are a unit test.', environment: 'vault', memory: { search_scope: scope } }));
  agent('unit', opts.scope);
  agent('other');
  const replies: Reply[] = [];
  const model = queuedModel(replies);
  const sandbox = new MemorySandbox({ exec: () => 'ran' });
  const deps = { ...testDeps({ UNIT_SECRET: SECRET }), models: model.registry, sandbox: () => sandbox };
  const store = new SessionStore(h.home, deps);
  const rt: Runtime = { home: h.home, store, deps };
  const session = (agentId = 'unit', title?: string) => createSession(store, { agent: agentId, ...(title ? { title } : {}) }).id;
  const events = (id: string): SessionEvent[] =>
    readLines(store.paths(id).events)
      .lines.map((l) => parseEventLine(l, deps.clock.now()))
      .flatMap((r) => (r.kind === 'event' ? [r.event] : []));
  const open = () => {
    const s = SessionSearch.open(store, deps.env);
    t.after(() => s.close());
    return s;
  };
  /** A tool call as a run makes it, for the agent `agentId` in session `sessionId`. */
  const ctx = (sessionId: string, agentId = 'unit'): ToolContext =>
    ({
      sessionId,
      wakeId: 'wake_test',
      toolUseId: 'sevt_test',
      clock: deps.clock,
      store,
      sandbox,
      redactor: Redactor.none,
      skills: [],
      shellTimeoutMs: 1000,
      outputLimitChars: 100_000,
      signal: new AbortController().signal,
      agent: loadAgent(h.home, agentId),
      processEnv: deps.env,
    }) as ToolContext;
  return { h, model, replies, store, rt, deps, session, events, open, ctx, agent };
}
