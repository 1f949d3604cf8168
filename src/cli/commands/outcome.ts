import fs from 'node:fs';
import path from 'node:path';
import { defineOutcome } from '../../core/ops/session-ops.js';
import { OpenboaError } from '../../core/foundation/errors.js';
import { MAX_ITERATIONS, outcomeIdOf } from '../../core/schema/index.js';
import { UsageError, type CliContext, type CommandInput, type FlagValue } from '../command.js';
import { wholeNumberFlag } from '../flags.js';
import { readStdin } from '../stdin.js';
import { whyItWaits } from '../why-it-waits.js';

/** How this command names each field defineOutcome checks (its errors carry the field, never a flag). */
const WORDS: Record<string, string> = {
  description: '<description>',
  rubric: '--rubric',
  check: '--check',
  max_iterations: '--max-iterations',
  files: '--file',
};

/** The rubric's text: stdin for "-", else the file, relative to where the command was run. */
async function rubricOf(ctx: CliContext, flag: FlagValue): Promise<string | undefined> {
  if (flag === undefined) return undefined;
  if (typeof flag !== 'string') throw new UsageError('--rubric needs a value: a file, or - for stdin');
  if (flag === '-') return readStdin(ctx.stdin);
  const file = path.resolve(ctx.cwd, flag);
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'it is a folder' : code === 'EACCES' ? 'permission denied' : (e as Error).message;
    throw new UsageError(`--rubric cannot read ${flag}: ${why}`);
  }
}

/** --file, given once or more: each value one path (an empty one is refused, not dropped). */
function filesOf(flag: FlagValue): string[] | undefined {
  if (flag === undefined) return undefined;
  const files = Array.isArray(flag) ? flag : [String(flag)];
  if (files.some((f) => f.trim() === '')) throw new UsageError('--file needs a path (a workspace file the rubric grader reads)');
  return files;
}

export async function run(ctx: CliContext, { args, rest, flags }: CommandInput): Promise<number | void> {
  const id = args.id as string;
  const maxIterations = wholeNumberFlag(flags, 'max-iterations', { min: 1, max: MAX_ITERATIONS, example: 3 });
  ctx.store.require(id);
  const description = [args.description ?? '', ...rest].join(' ');
  const rubric = await rubricOf(ctx, flags.rubric);
  const check = typeof flags.check === 'string' ? flags.check : undefined;
  const files = filesOf(flags.file);
  let e;
  try {
    e = defineOutcome(ctx.store, id, {
      description,
      ...(rubric !== undefined ? { rubric } : {}),
      ...(check !== undefined ? { check } : {}),
      ...(maxIterations !== undefined ? { maxIterations } : {}),
      ...(files !== undefined ? { files } : {}),
    });
  } catch (err) {
    const field = OpenboaError.is(err) ? err.data.field : undefined;
    if (typeof field === 'string' && WORDS[field]) throw new UsageError(`${WORDS[field]} ${(err as Error).message}`);
    throw err;
  }
  const outcomeId = outcomeIdOf(e.id);
  const notes = await whyItWaits(ctx, id, 'the outcome');
  ctx.out.result({ id: e.id, outcome_id: outcomeId, type: e.type, created_at: e.created_at, notes }, `${e.id} ${outcomeId}`);
  for (const note of notes) ctx.out.warn(note);
}
