/**
 * Skills: `agents/<id>/skills/<name>/SKILL.md`. The system prompt lists each
 * skill's name and description (from the frontmatter); the `skill` tool
 * returns a body on demand, so skills cost little context until used.
 */
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import * as z from 'zod';

export interface Skill {
  name: string;
  description: string;
  /** The body after the frontmatter. */
  body: string;
  file: string;
}

const Frontmatter = z.object({ name: z.string().min(1).optional(), description: z.string().min(1) }).loose();

export interface SkillProblem {
  file: string;
  message: string;
}

/** Loads every skill of an agent; a broken SKILL.md is reported, not fatal. */
export function loadSkills(agentDir: string): { skills: Skill[]; problems: SkillProblem[] } {
  const dir = path.join(agentDir, 'skills');
  const skills: Skill[] = [];
  const problems: SkillProblem[] = [];
  let names: string[] = [];
  try {
    names = fs.readdirSync(dir).sort();
  } catch {
    return { skills, problems };
  }
  for (const n of names) {
    const file = path.join(dir, n, 'SKILL.md');
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    const m = /^---\r?\n([\s\S]*?)\r?\n---\r?\n?([\s\S]*)$/.exec(text);
    if (!m) {
      problems.push({ file, message: 'expected YAML frontmatter between --- lines with a description' });
      continue;
    }
    let fm: unknown;
    try {
      fm = YAML.parse(m[1] ?? '');
    } catch (e) {
      problems.push({ file, message: `frontmatter: ${(e as Error).message.split('\n')[0]}` });
      continue;
    }
    const r = Frontmatter.safeParse(fm);
    if (!r.success) {
      problems.push({ file, message: `frontmatter: ${r.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}` });
      continue;
    }
    skills.push({ name: r.data.name ?? n, description: r.data.description, body: (m[2] ?? '').trim(), file });
  }
  return { skills, problems };
}
