/**
 * The built-in `learn` tool (docs/memory.md, "Learnings"): the agent records
 * a lesson, a correction or an error for its later sessions. The learning is
 * appended to `agents/<id>/learnings.jsonl` in one write (redacted and
 * bounded), LEARNINGS.md is rendered again, and the agent's next runs read
 * it in their system prompt. This run's prompt does not change (the prompt
 * cache): the learning is there from the next run on.
 */
import { LearnInput } from '../schema/index.js';
import { appendLearning } from '../memory/learnings.js';
import { renderLearningsFile } from '../memory/learnings-file.js';
import { OpenboaError } from '../foundation/errors.js';
import { fail, ok, type Tool } from './tool.js';

export const LEARN_DESCRIPTION =
  "Record something worth knowing in this agent's later sessions: a lesson (what worked, what to do differently), a correction (a person told you otherwise) or an error (a mistake not to repeat). Write it so it makes sense without this session; never include secrets. Learnings appear in the system prompt of later runs; repeating one strengthens it.";

/** learn calls one run may make: a runaway loop cannot fill the journal every later prompt is made from. */
export const MAX_LEARNINGS_PER_RUN = 10;

export const learnTool: Tool<typeof LearnInput> = {
  name: 'learn',
  description: LEARN_DESCRIPTION,
  input: LearnInput,
  async run(input, ctx) {
    if (!ctx.agent) return fail('learn needs the session\'s agent, which this call does not know');
    if ((ctx.runUses?.('learn') ?? 0) > MAX_LEARNINGS_PER_RUN) return fail(`not recorded: one run records at most ${MAX_LEARNINGS_PER_RUN} learnings; keep the few that matter most`);
    const home = ctx.store.home;
    let id: string;
    try {
      const entry = appendLearning(home, ctx.agent.id, { kind: input.kind, source: 'agent', text: input.text, tags: input.tags, sessionId: ctx.sessionId, eventId: ctx.toolUseId, wakeId: ctx.wakeId }, { clock: ctx.clock, redactor: ctx.redactor });
      id = entry.id;
    } catch (e) {
      const why = OpenboaError.is(e) ? e.message : ((e as NodeJS.ErrnoException).code ?? 'write failed');
      return fail(`learn could not record it (${why}); nothing was recorded`);
    }
    try {
      renderLearningsFile(home, ctx.agent.id);
    } catch {
      // LEARNINGS.md is derived: the next render writes it; the learning is in the journal
    }
    return ok(`Recorded ${input.kind} ${id}; later runs of this agent will see it.`);
  },
};
