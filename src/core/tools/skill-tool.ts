import { SkillInput } from '../schema/index.js';
import { fail, ok, type Tool } from './tool.js';

/** skill: returns one skill's body; the system prompt lists names and descriptions. */
export const skillTool: Tool<typeof SkillInput> = {
  name: 'skill',
  description: 'Read the full instructions of one of your skills (listed in the system prompt).',
  input: SkillInput,
  async run(input, ctx) {
    const s = ctx.skills.find((k) => k.name === input.name);
    if (!s) return fail(`no skill named ${JSON.stringify(input.name)}; available: ${ctx.skills.map((k) => k.name).join(', ') || 'none'}`);
    return ok(s.body || '(this skill has no body)');
  },
};
