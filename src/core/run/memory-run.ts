/**
 * The agent's memory directory in a run (docs/memory.md, "Memory directory"
 * and "Versions"):
 *
 * - memorySection: MEMORY.md's section of the system prompt (a prompt
 *   section: read once, at the run's first request, and the same for the
 *   rest of the run, the prompt cache); a change made during the run is in
 *   the next run's prompt.
 * - memoryRecorder(): what the file tools write into /memory is recorded as
 *   they write it (recording-sandbox.ts, wrapped around the run's sandbox);
 *   what bash changes is found by a scan of memory/ after every turn that
 *   called a tool, and once more when the run ends (so a change made by a
 *   turn that ended the run by a crash-free path is never missed). A change
 *   made between two scans by another session of the agent, or by a person
 *   on the host, is recorded by whichever scan sees it first, as that run's.
 *
 * Secrets: the section, every path and every content the versions keep are
 * redacted with the run's Redactor, which knows the secrets of every session
 * of the agent (agent-secrets.ts), since memory outlives the session that
 * wrote it. The file in memory/ keeps what the agent wrote.
 *
 * Only for `memory: read_write` (read_only: the agent cannot change it;
 * none: there is no /memory). A failed scan never stops a run: the next
 * scan compares with the log again, so nothing is lost but the moment.
 * A scan that logs `over_quota` or `scan_incomplete` also tells the
 * operator in the session's log: a session.error (terminal, the run goes
 * on) with code memory_over_quota or memory_scan_incomplete, once per run
 * and code.
 */
import { memoryPromptSection, notVersioned, recordContent } from '../memory/memory-dir.js';
import { newScanState, scanAndRecord, type ScanState } from '../memory/memory-scan.js';
import { recordingSandbox } from '../memory/recording-sandbox.js';
import { memoryVersioned } from '../memory/version-store.js';
import type { Clock } from '../foundation/clock.js';
import type { Home } from '../foundation/home.js';
import type { Redactor } from '../foundation/redact.js';
import type { MemorySettings } from '../schema/index.js';
import type { Sandbox } from '../sandbox/sandbox.js';
import type { VersionLine } from '../schema/index.js';
import type { RunJournal } from './journal.js';
import type { AfterRunHook, AfterTurnHook, PromptSection, RunService } from './loop-hooks.js';
import type { RunContext } from './run-context.js';

/** Files of /memory the runtime renders: the file tools refuse them, saying what to use instead. */
const DERIVED: ReadonlyMap<string, string> = new Map([['LEARNINGS.md', 'rendered by the runtime from your learnings journal (an edit would be overwritten); record a learning with the learn tool instead']]);

/**
 * MEMORY.md's section of the run's prompt (null: none): a prompt section,
 * rendered once per run. The agent may have written a secret of its
 * environment into MEMORY.md: the model never sees it (redacted with the
 * run's Redactor); an unreadable MEMORY.md leaves the prompt without it.
 */
export const memorySection: PromptSection = {
  name: 'memory',
  render(ctx) {
    const raw = memoryPromptSection(ctx.rt.home, ctx.agent.id, ctx.agent.def.memory);
    return raw === null ? null : ctx.env.redactor.text(raw);
  },
};

/** The run's sandbox, with the file tools' writes into /memory recorded as versions, redacted (read_write only). */
export function withMemoryVersions(sandbox: Sandbox, o: { home: Home; agentId: string; memory: MemorySettings; sessionId: string; wakeId: string; clock: Clock; redactor: Redactor }): Sandbox {
  if (o.memory.mode !== 'read_write') return sandbox;
  const v = memoryVersioned(o.home, o.agentId);
  return recordingSandbox(
    sandbox,
    v.target,
    async (rel, data) => {
      try {
        await recordContent(v, rel, data, 'write', { session_id: o.sessionId, wake_id: o.wakeId }, o.clock, { redactor: o.redactor });
      } catch {
        // the file is there: the next scan records it
      }
    },
    { derived: DERIVED, skip: notVersioned },
  );
}

/** The run service that wraps the run's sandbox so the file tools' writes into /memory are versions as they happen. */
export function memoryVersions(): RunService {
  return {
    name: 'memory versions',
    provide: ({ rt, agent, sessionId, runId, env }) => ({ sandbox: (s) => withMemoryVersions(s, { home: rt.home, agentId: agent.id, memory: agent.def.memory, sessionId, wakeId: runId, clock: rt.deps.clock, redactor: env.redactor }) }),
  };
}

/** Scans memory/ after each turn that called a tool and at the run's end, recording what changed. */
export function memoryRecorder(): AfterTurnHook & AfterRunHook {
  let state: ScanState | null = null;
  const told = new Set<string>();
  const scan = async (ctx: RunContext, journal: RunJournal) => {
    if (ctx.agent.def.memory.mode !== 'read_write') return;
    const v = memoryVersioned(ctx.rt.home, ctx.agent.id);
    state ??= newScanState(v, {}, ctx.env.redactor);
    let lines: VersionLine[];
    try {
      lines = await scanAndRecord(v, state, { session_id: ctx.sessionId, wake_id: ctx.runId }, ctx.rt.deps.clock);
    } catch {
      return; // the next scan compares with the log again
    }
    tell(journal, told, lines);
  };
  return {
    async afterTurn(ctx, journal, turn) {
      if (turn && turn.uses.length > 0) await scan(ctx, journal);
      return undefined;
    },
    async afterRun(ctx, journal, ending) {
      await scan(ctx, journal);
      return ending;
    },
  };
}

/** A session.error for what the operator should know of a scan (versions not kept), once per run and code. */
function tell(journal: RunJournal, told: Set<string>, lines: readonly VersionLine[]): void {
  const over = lines.filter((l) => l.op === 'over_quota');
  if (over.length > 0 && !told.has('memory_over_quota')) {
    told.add('memory_over_quota');
    journal.error({ code: 'memory_over_quota', message: `/memory: ${over.length} change(s) logged without their content (the run's byte budget or the agent's version store quota is spent); see memory.log.jsonl`, retry: 'terminal' });
  }
  const marker = lines.find((l) => l.op === 'scan_incomplete');
  if (marker && !told.has('memory_scan_incomplete')) {
    told.add('memory_scan_incomplete');
    journal.error({ code: 'memory_scan_incomplete', message: `/memory scan incomplete: ${marker.message ?? 'a bound was reached'}`, retry: 'terminal' });
  }
}
