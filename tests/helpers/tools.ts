/**
 * Runs built-in tools in-process, the way a run does (ToolCatalog.execute:
 * input validation, redaction, host-path hiding, the output limit), against
 * a sandbox the test chooses — usually a MemorySandbox. No home, no log,
 * no model: for tests of what a tool answers.
 */
import { ToolCatalog } from '../../src/core/tools/catalog.js';
import type { ToolContext, ToolOutput } from '../../src/core/tools/tool.js';
import type { Sandbox } from '../../src/core/sandbox/sandbox.js';
import type { SessionStore } from '../../src/core/store/session-store.js';
import { Redactor } from '../../src/core/foundation/redact.js';
import { ManualClock } from './clock.js';
import type { EgressAccess } from '../../src/core/egress/egress-access.js';

export interface ToolRunner {
  /** Runs one tool with `input`; every call gets a fresh tool-use id. */
  run(name: string, input: unknown, o?: { signal?: AbortSignal }): Promise<ToolOutput>;
}

/** The file tools and bash never touch the store: a store that says so if one does. */
const NO_STORE = new Proxy({} as SessionStore, {
  get(_t, key) {
    throw new Error(`this tool test has no session store (a tool read store.${String(key)})`);
  },
});

export function toolRunner(sandbox: Sandbox, o: { shellTimeoutMs?: number; outputLimitChars?: number; secrets?: Record<string, string>; egress?: EgressAccess } = {}): ToolRunner {
  const catalog = new ToolCatalog({ tools: {}, custom_tools: [] }, { hasSkills: false });
  const clock = new ManualClock();
  let n = 0;
  return {
    run(name, input, r = {}) {
      const ctx: ToolContext = {
        sessionId: 'ses_test',
        wakeId: 'run_test',
        toolUseId: `sevt_tool_${++n}`,
        clock,
        store: NO_STORE,
        sandbox,
        redactor: new Redactor(o.secrets ?? {}),
        skills: [],
        shellTimeoutMs: o.shellTimeoutMs ?? 120_000,
        outputLimitChars: o.outputLimitChars ?? 30_000,
        signal: r.signal ?? new AbortController().signal,
        ...(o.egress ? { egress: o.egress } : {}),
      };
      return catalog.execute(name, input, ctx);
    },
  };
}
