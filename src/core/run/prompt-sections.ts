/**
 * The run's prompt sections (loop-hooks.ts, promptSections[]): the list the
 * run opened with, rendered into text once, the first time a request needs
 * the system prompt, and kept for the rest of the run in its state.
 */
import type { PromptSection } from './loop-hooks.js';
import type { RunContext } from './run-context.js';
import { runSlot } from './run-state.js';

const PROMPT = runSlot<{ sections: readonly PromptSection[]; rendered: string[] | null }>('prompt sections', () => ({ sections: [], rendered: null }));

/** The sections this run's system prompt is made of (called once, as the run opens). */
export function usePromptSections(ctx: RunContext, sections: readonly PromptSection[]): void {
  ctx.state.get(PROMPT).sections = sections;
}

/** The sections' text, rendered at the first call and the same after; a section that throws is left out. */
export function renderedSections(ctx: RunContext): string[] {
  const p = ctx.state.get(PROMPT);
  p.rendered ??= p.sections.flatMap((sec) => {
    try {
      const text = sec.render(ctx);
      return text !== null && text.trim() !== '' ? [text] : [];
    } catch {
      return [];
    }
  });
  return p.rendered;
}
