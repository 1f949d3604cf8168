/**
 * The system prompt of a run: the agent's `system`, then AGENTS.md, then a
 * skill index (name and description; bodies on demand through the `skill`
 * tool), then a short block of runtime facts. Everything else the agent may
 * want is in /runtime, rereadable at any time.
 */
import type { Skill } from './skills.js';
import type { RunEnvironment } from './environment.js';
import type { PendingWake } from '../schema/index.js';

export interface PromptFacts {
  sessionId: string;
  agentId: string;
  environmentId: string;
  nowIso: string;
  wakeId: string;
  trigger: string;
  wakeReason: string;
  env: RunEnvironment;
  pendingWakes: PendingWake[];
}

export function systemPrompt(o: { system: string; instructions: string | null; skills: Skill[]; facts: PromptFacts }): string {
  const parts: string[] = [];
  if (o.system.trim()) parts.push(o.system.trim());
  if (o.instructions?.trim()) parts.push(`# Instructions (AGENTS.md)\n\n${o.instructions.trim()}`);
  if (o.skills.length) {
    parts.push(
      [
        '# Skills',
        '',
        'Read a skill with the `skill` tool before you follow it.',
        '',
        ...o.skills.map((s) => `- ${s.name}: ${s.description}`),
      ].join('\n'),
    );
  }
  parts.push(runtimeFacts(o.facts));
  return parts.join('\n\n');
}

function runtimeFacts(f: PromptFacts): string {
  const p = f.env.posture;
  const sandbox = p
    ? p.isolation === 'bwrap'
      ? `bubblewrap: only /workspace (read-write), /runtime (read-only) and system directories exist; network ${p.network_closed ? 'closed' : 'open'}`
      : p.isolation === 'unshare-net'
        ? `network closed (unshare), but files are NOT confined; your workspace is at ${f.env.homeDir} in the shell (the file tools still take /workspace paths)`
        : `none (unconfined process); your workspace is at ${f.env.homeDir} in the shell (the file tools take /workspace paths)`
    : `unavailable: ${f.env.sandboxError}`;
  const wakes = f.pendingWakes.length
    ? f.pendingWakes.map((w) => `  - ${w.id} due ${w.due_at}: ${w.reason}`).join('\n')
    : '  (none)';
  return [
    '# Runtime',
    '',
    `- session ${f.sessionId} (agent ${f.agentId}, environment ${f.environmentId})`,
    `- now ${f.nowIso}; this run ${f.wakeId}, woken by ${f.trigger}: ${f.wakeReason}`,
    `- sandbox: ${sandbox}`,
    '- /runtime (read-only) holds your runtime facts: environment.json, tools.json, shell.json, context.json, event-feed.md, traces/',
    '- to come back later, use schedule_wake; pending revisits:',
    wakes,
  ].join('\n');
}
