/**
 * A test bench for runs: a temp home with an agent on the anthropic provider
 * pointed at the scripted Messages API server, the real store, the real
 * sandbox, and a manual clock.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { TestContext } from 'node:test';
import YAML from 'yaml';
import { SessionStore } from '../../src/core/store/session-store.js';
import { sendMessage } from '../../src/core/ops/session-ops.js';
import { createSession } from '../../src/core/ops/create-session.js';
import { wake } from '../../src/core/run/wake.js';
import type { Runtime } from '../../src/core/run/run-context.js';
import type { WakeOptions } from '../../src/core/run/wake-api.js';
import { readLines } from '../../src/core/store/jsonl.js';
import { parseEventLine } from '../../src/core/store/parse-line.js';
import type { SessionEvent } from '../../src/core/schema/index.js';
import { startFakeAnthropic, type FakeAnthropic, type Step } from './fake-anthropic.js';
import { tempHome, type TempHome } from './home.js';
import { testDeps } from './deps.js';
import { probeCapabilities } from '../../src/core/sandbox/isolation.js';

export interface Bench {
  h: TempHome;
  fake: FakeAnthropic;
  rt: Runtime;
  store: SessionStore;
  deps: ReturnType<typeof testDeps>;
  /** Creates a session of `agent` (default "test") and sends `message` if given. */
  session(message?: string, agent?: string): string;
  wake(id: string, opts?: WakeOptions): ReturnType<typeof wake>;
  events(id: string): SessionEvent[];
  /** Raw text of every file under the home (for "the secret is nowhere" checks). */
  allFiles(): Array<{ file: string; text: string }>;
}

export interface AgentSpec {
  system?: string;
  tools?: Record<string, { permission: string }>;
  custom_tools?: unknown[];
  limits?: Record<string, unknown>;
  /** agent.yaml `context:` (compaction and warnings). */
  context?: Record<string, unknown>;
  environment?: string;
}

export function writeAgent(h: TempHome, id: string, spec: AgentSpec = {}) {
  h.write(
    `agents/${id}/agent.yaml`,
    YAML.stringify({ provider: 'anthropic', model: 'fake-model', system: spec.system ?? 'You are a test agent.', environment: spec.environment ?? 'local', ...(spec.tools ? { tools: spec.tools } : {}), ...(spec.custom_tools ? { custom_tools: spec.custom_tools } : {}), ...(spec.limits ? { limits: spec.limits } : {}), ...(spec.context ? { context: spec.context } : {}) }),
  );
}

export async function bench(t: TestContext, o: { steps?: Step[]; agent?: AgentSpec; env?: NodeJS.ProcessEnv } = {}): Promise<Bench> {
  const h = tempHome(t);
  const fake = await startFakeAnthropic(o.steps ?? []);
  t.after(() => fake.close());
  writeAgent(h, 'test', o.agent);
  const deps = testDeps({ ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: fake.url, ...o.env });
  const store = new SessionStore(h.home, deps);
  const rt: Runtime = { home: h.home, store, deps };
  return {
    h,
    fake,
    rt,
    store,
    deps,
    session(message, agent = 'test') {
      const s = createSession(store, { agent });
      if (message !== undefined) sendMessage(store, s.id, message);
      return s.id;
    },
    wake: (id, opts) => wake(rt, id, opts),
    events(id) {
      return readLines(store.paths(id).events)
        .lines.map((l) => parseEventLine(l, deps.clock.now()))
        .flatMap((r) => (r.kind === 'event' ? [r.event] : []));
    },
    allFiles() {
      const out: Array<{ file: string; text: string }> = [];
      const walk = (d: string) => {
        for (const e of fs.readdirSync(d, { withFileTypes: true })) {
          const p = path.join(d, e.name);
          if (e.isDirectory()) walk(p);
          else if (e.isFile()) out.push({ file: p, text: fs.readFileSync(p, 'latin1') });
        }
      };
      walk(path.join(h.root, 'sessions'));
      return out;
    },
  };
}

/** Whether bubblewrap works here (else the shell runs on the host: unshare-net or unconfined). */
export const BWRAP = probeCapabilities().bwrap;

/**
 * Why a test that runs the shell is skipped: neither bubblewrap nor unshare
 * works here, so the bundled environment (network: none) refuses to run a
 * shell at all. false where one of them works.
 */
export const NO_SHELL: string | false =
  BWRAP || probeCapabilities().unshare ? false : 'needs a sandbox for the shell: neither bubblewrap nor unshare works here, and network: none refuses to run a shell without one';

/** The workspace as the session's shell sees it: /workspace under bubblewrap, its host path otherwise. */
export function shellWorkspace(b: Bench, id: string): string {
  return BWRAP ? '/workspace' : b.store.paths(id).workspace;
}

export const textOf = (blocks: unknown): string =>
  Array.isArray(blocks) ? blocks.map((b) => (b as { text?: string }).text ?? '').join('') : String(blocks);

/** The tool_result blocks of a request's last user message, by toolu id. */
export function toolResults(req: { body: { messages: Array<{ content: unknown }> } }): Map<string, { text: string; isError: boolean }> {
  const last = req.body.messages[req.body.messages.length - 1]!;
  const out = new Map<string, { text: string; isError: boolean }>();
  for (const b of last.content as Array<Record<string, unknown>>) if (b.type === 'tool_result') out.set(String(b.tool_use_id), { text: textOf(b.content), isError: b.is_error === true });
  return out;
}
