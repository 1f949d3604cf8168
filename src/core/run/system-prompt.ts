/**
 * The system prompt: the agent's `system`, then the run's prompt sections in
 * the order defaultHooks() lists them: AGENTS.md, a skill index (name and
 * description; bodies on demand through the `skill` tool), the agent's
 * MEMORY.md and learnings, and a short block of facts that hold for the
 * whole session. It is the same for
 * every request of a session (until its definition changes), so that each
 * request repeats the previous one as its prefix and the prompt cache hits.
 *
 * What changes from run to run (the time, the run id, why it woke, the
 * pending revisits) is not here: runContext() renders it once per run, the
 * run stores it in its session.status_running (`context`), and it enters the
 * conversation as the last block of that run's user turn, so a conversation
 * rebuilt from the log is the same, byte for byte.
 *
 * Everything else the agent may want is in /runtime, rereadable at any time.
 */
import type { RunEnvironment } from './environment.js';
import type { PromptSection } from './loop-hooks.js';
import type { PendingWake } from '../schema/index.js';
import { describeRecurrence } from '../schedule/recurrence.js';

/** Facts that hold for the whole session: they belong in the (cached) system prompt. */
export interface SessionFacts {
  sessionId: string;
  agentId: string;
  environmentId: string;
  env: RunEnvironment;
}

/** Facts of one run: they go into its user turn (runContext). */
export interface RunFacts {
  nowIso: string;
  wakeId: string;
  trigger: string;
  wakeReason: string;
  pendingWakes: readonly PendingWake[];
}

/** The system prompt: the agent's `system`, then each section the run rendered (promptSections, in order), blank-line separated. */
export function systemPrompt(system: string, sections: readonly string[]): string {
  return [system.trim(), ...sections.map((x) => x.trim())].filter((x) => x !== '').join('\n\n');
}

/** AGENTS.md, as the agent's instructions. */
export const instructionsSection: PromptSection = {
  name: 'instructions',
  render: (ctx) => (ctx.agent.instructions?.trim() ? `# Instructions (AGENTS.md)\n\n${ctx.agent.instructions.trim()}` : null),
};

/** The skill index: name and description (bodies on demand through the `skill` tool). */
export const skillsSection: PromptSection = {
  name: 'skills',
  render: (ctx) =>
    ctx.skills.length
      ? ['# Skills', '', 'Read a skill with the `skill` tool before you follow it.', '', ...ctx.skills.map((sk) => `- ${sk.name}: ${sk.description}`)].join('\n')
      : null,
};

/** The facts that hold for the whole session: the runtime note, last. */
export const runtimeSection: PromptSection = {
  name: 'runtime',
  render: (ctx) => runtimeFacts({ sessionId: ctx.sessionId, agentId: ctx.agent.id, environmentId: ctx.environment.id, env: ctx.env }),
};

function runtimeFacts(f: SessionFacts): string {
  const p = f.env.posture;
  const sandbox = p
    ? p.isolation === 'bwrap'
      ? `bubblewrap: only /workspace (read-write), /runtime (read-only), the directories listed below and system directories exist; network ${p.network_closed ? 'closed' : 'open'}`
      : p.isolation === 'unshare-net'
        ? `network closed (unshare), but files are NOT confined; your workspace is at ${f.env.homeDir} in the shell (the file tools still take /workspace paths)`
        : `none (unconfined process); your workspace is at ${f.env.homeDir} in the shell (the file tools take /workspace paths)`
    : `unavailable: ${f.env.sandboxError}`;
  return [
    '# Runtime',
    '',
    `- session ${f.sessionId} (agent ${f.agentId}, environment ${f.environmentId})`,
    `- sandbox: ${sandbox}`,
    '- /runtime (read-only) holds your runtime facts: environment.json, tools.json, shell.json, context.json, event-feed.md, traces/',
    ...agentDirs(f.env),
    '- each run starts with a note of its time, why it woke and your pending revisits; to come back later, use schedule_wake',
  ].join('\n');
}

/** The agent's own directories, when mounted (docs/memory.md). */
function agentDirs(env: RunEnvironment): string[] {
  const out: string[] = [];
  const memory = env.mounts.find((m) => m.target === '/memory');
  if (memory) out.push(`- /memory (${memory.writable ? 'read-write' : 'read-only'}): this agent's memory, shared by its sessions and versioned; documents up to ${memory.maxFileBytes ?? 0} bytes; its MEMORY.md, when there is one, is above`);
  if (env.mounts.some((m) => m.target === '/substrate')) out.push("- /substrate (read-only): files promoted from this agent's sessions");
  return out;
}

/** The note that opens a run's part of the conversation: when, which run, why, what is scheduled. */
export function runContext(f: RunFacts): string {
  const wakes = f.pendingWakes.length ? f.pendingWakes.map((w) => `  - ${w.id} due ${w.due_at}${w.recurrence ? ` (${describeRecurrence(w.recurrence)})` : ''}: ${w.reason}`).join('\n') : '  (none)';
  return [`[openboa] now ${f.nowIso}; this run ${f.wakeId}, woken by ${f.trigger}: ${f.wakeReason}`, 'pending revisits:', wakes].join('\n');
}
