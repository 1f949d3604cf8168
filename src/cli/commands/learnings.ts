import fs from 'node:fs';
import { learningsPaths, mergeLearnings, readLearnings, retireLearning } from '../../core/memory/learnings.js';
import { renderLearningsFile } from '../../core/memory/learnings-file.js';
import { notFound } from '../../core/foundation/errors.js';
import type { CliContext, CommandInput } from '../command.js';
import { redactForAgent } from '../session-redactor.js';

export async function run(ctx: CliContext, { args, flags }: CommandInput): Promise<number | void> {
  const agent = args.agent!;
  const p = learningsPaths(ctx.home, agent);
  if (!fs.existsSync(ctx.home.agentFile(agent))) {
    throw notFound(`agent ${agent} not found (no ${ctx.home.agentFile(agent)}; openboa agents lists them)`);
  }
  // The journal is redacted as it is written; this also covers lines written before a secret was known, or by hand.
  redactForAgent(ctx, agent);
  if (typeof flags.retire === 'string') {
    const r = retireLearning(ctx.home, agent, flags.retire, ctx.deps.clock);
    renderLearningsFile(ctx.home, agent);
    if (ctx.json) return ctx.out.data({ agent_id: agent, retired: r.id, already: r.already });
    return ctx.out.line(r.already ? `${r.id} was already retired` : `retired ${r.id}: it is left out of ${p.markdown} and of the next runs' system prompt`);
  }
  const j = readLearnings(p.journal);
  const all = mergeLearnings(j);
  if (ctx.json) return ctx.out.data({ agent_id: agent, learnings: all.map(({ key: _key, last_line: _line, ...g }) => g), skipped: j.notes });
  for (const n of j.notes) ctx.out.warn(`${n.file} line ${n.line} skipped: ${n.problem}`);
  if (all.length === 0) return ctx.out.line(`no learnings yet for agent ${agent} (${p.journal})`);
  const { table, clipToWidth } = await import('../width.js');
  ctx.out.line(
    table(
      ['ID', 'KIND', 'FROM', 'TIMES', 'LAST', 'STATUS', 'TEXT'],
      all.map((g) => [g.id, g.kind, g.source, String(g.count), g.last_at.slice(0, 19), status(g), clipToWidth(g.text, 80)]),
    ),
  );
}

/** Retired stays retired; a session that learns the same again is counted, and shown here for the person. */
function status(g: { retired: boolean; relearned: number }): string {
  if (!g.retired) return 'active';
  return g.relearned > 0 ? `retired (learned again ${g.relearned}×)` : 'retired';
}
