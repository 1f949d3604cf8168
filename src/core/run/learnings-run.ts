/**
 * Learnings in a run (docs/memory.md, "Learnings"): the system prompt's
 * section, rendered from the agent's journal once per run (so every request
 * of the run repeats the same prompt, and a run that learns nothing new
 * sends the prompt of the run before: the prompt cache), and the after-run
 * hook that turns a person's denial with a message into a `correction`.
 *
 * The correction is keyed by the confirmation's event id and written only
 * when the journal has none for it, so a run that recovers from one killed
 * after settling the denial (its confirmation still in the log's recent
 * window) writes it once, not twice.
 */
import { appendLearning, hasLearningFrom, learningsPaths, readLearnings } from '../memory/learnings.js';
import { renderLearningsFile } from '../memory/learnings-file.js';
import type { SessionEvent } from '../schema/index.js';
import { cutHead } from '../foundation/text-cut.js';
import type { AfterRunHook, PromptSection } from './loop-hooks.js';
import { toolUseView } from '../kinds/index.js';

/**
 * The learnings section of the run's system prompt (null: none), a prompt
 * section: rendered at the run's first request (LEARNINGS.md is rewritten
 * then if the journal says something else) and the same for the rest of the
 * run. Redacted with the run's Redactor: the journal is redacted as it is
 * written, but a line written by hand, or by a release that did not redact
 * pieces of secrets, may hold one. An unreadable journal leaves the prompt
 * without learnings; it never stops a run.
 */
export const learningsSection: PromptSection = {
  name: 'learnings',
  render(ctx) {
    const raw = renderLearningsFile(ctx.rt.home, ctx.agent.id).section;
    return raw === null ? null : ctx.env.redactor.text(raw);
  },
};

/** The longest an input is quoted in a correction. */
const INPUT_QUOTE_MAX = 200;

/** What a correction says: the tool, its input in short, and the person's message. */
export function correctionText(use: { name: string; input: unknown }, denyMessage: string): string {
  let input: string;
  try {
    input = JSON.stringify(use.input ?? {}) ?? '{}';
  } catch {
    input = '(unreadable input)';
  }
  if (input.length > INPUT_QUOTE_MAX) input = `${cutHead(input, INPUT_QUOTE_MAX)}…`;
  return `A person denied the tool call ${use.name} ${input} and said: ${denyMessage.trim()}`;
}

type Confirmation = Extract<SessionEvent, { type: 'user.tool_confirmation' }>;

/**
 * After the run: each denial with a message among the log's recent events
 * (up to the window's bound) becomes a correction, once per confirmation.
 * A failure to write is left for the next run (the denial stays in the log).
 */
export function correctionsFromDenials(): AfterRunHook {
  return {
    afterRun(ctx, _journal, ending) {
      
      try {
        // Up to what the run has written (answers that arrived while it settled the first ones, too).
        ctx.window.refresh(ctx.rt.store.snapshot(ctx.sessionId, { persist: false }));
      } catch {
        // the window as it stands
      }
      const recent = ctx.window.recent.map((l) => l.event);
      const denials = recent.filter((e): e is Confirmation => e.type === 'user.tool_confirmation' && e.result === 'deny' && typeof e.deny_message === 'string' && e.deny_message.trim() !== '');
      if (denials.length === 0) return ending;
      try {
        const home = ctx.rt.home;
        const j = readLearnings(learningsPaths(home, ctx.agent.id).journal);
        let added = 0;
        for (const d of denials) {
          if (hasLearningFrom(j, d.id)) continue;
          const found = recent.find((e) => e.id === d.tool_use_id && (e.type === 'agent.tool_use' || e.type === 'agent.mcp_tool_use'));
          if (!found || (found.type !== 'agent.tool_use' && found.type !== 'agent.mcp_tool_use')) continue;
          // An MCP call is named as the model called it (mcp__<server>__<tool>).
          const use = toolUseView(found) ?? found;
          const text = correctionText(use, d.deny_message!);
          appendLearning(home, ctx.agent.id, { kind: 'correction', source: 'person', text, tags: [use.name], sessionId: ctx.sessionId, eventId: d.id, wakeId: ctx.runId }, { clock: ctx.rt.deps.clock, redactor: ctx.env.redactor });
          added += 1;
        }
        if (added > 0) renderLearningsFile(home, ctx.agent.id);
      } catch {
        // the denial stays in the log: the next run of this session tries again
      }
      return ending;
    },
  };
}
