import fs from 'node:fs';
import path from 'node:path';
import { UsageError, type CliContext, type CommandInput } from '../command.js';
import { PACKAGE } from '../package-root.js';
import { invocation } from '../invocation.js';

/** The installed package's own folder, where the bundled agents and environments are. */
const PACKAGE_ROOT = PACKAGE.root;

/** What a working home gets from the package: the bundled agents and the local environment. */
const BUNDLED = ['agents/demo', 'agents/claude', 'environments/local.yaml'];

/** Every file under `rel` in the package (or `rel` itself when it is a file), as paths relative to the package. */
function filesOf(rel: string): string[] {
  const abs = path.join(PACKAGE_ROOT, rel);
  if (!fs.statSync(abs).isDirectory()) return [rel];
  return fs
    .readdirSync(abs, { withFileTypes: true })
    .sort((a, b) => a.name.localeCompare(b.name))
    .flatMap((d) => filesOf(path.join(rel, d.name)));
}

/** Makes `root` a working home (never overwriting a file): what it created and what was already there. */
export function initHome(root: string): { created: string[]; kept: string[] } {
  if (fs.existsSync(root) && !fs.statSync(root).isDirectory()) throw new UsageError(`${root} is a file, not a folder`);
  let sources: string[];
  try {
    sources = BUNDLED.flatMap(filesOf);
  } catch (e) {
    throw new Error(`the openboa package at ${PACKAGE_ROOT} is incomplete (${(e as Error).message}); reinstall it`);
  }
  const created: string[] = [];
  const kept: string[] = [];
  for (const rel of sources) {
    const dest = path.join(root, rel);
    try {
      fs.mkdirSync(path.dirname(dest), { recursive: true });
      // COPYFILE_EXCL: the check for an existing file and the copy are one operation.
      fs.copyFileSync(path.join(PACKAGE_ROOT, rel), dest, fs.constants.COPYFILE_EXCL);
      created.push(rel);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw new Error(`cannot create ${dest}: ${(e as Error).message}`);
      kept.push(rel);
    }
  }
  const sessions = path.join(root, 'sessions');
  try {
    fs.mkdirSync(sessions);
    created.push('sessions/');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw new Error(`cannot create ${sessions}: ${(e as Error).message}`);
    kept.push('sessions/');
  }
  return { created, kept };
}

export async function run(ctx: CliContext, { args }: CommandInput): Promise<number | void> {
  const root = args.dir !== undefined ? path.resolve(ctx.cwd, args.dir) : ctx.home.root;
  const { created, kept } = initHome(root);
  ctx.out.result({ home: root, created, kept }, () => {
    const lines = [created.length ? `created a home in ${root}:` : `${root} is already a home; nothing to create`];
    for (const f of created) lines.push(`  ${f}`);
    if (kept.length && created.length) lines.push(`kept as they were (${kept.length} file(s) already there): ${kept.join(', ')}`);
    const rel = path.relative(ctx.cwd, root);
    const cli = invocation(root, process.env);
    const steps: Array<[string, string]> = [
      ...(rel === '' ? [] : ([[`cd ${rel.startsWith('..') ? root : rel}`, '']] as Array<[string, string]>)),
      [`${cli} doctor`, 'can sessions run here?'],
      [`${cli} session create --agent demo`, 'an offline demo session; prints its id'],
      [`${cli} send <id> "hello"`, ''],
      [`${cli} daemon`, 'runs sessions as they get work (Ctrl-C stops it)'],
    ];
    const w = Math.max(...steps.map(([c]) => c.length));
    lines.push('', 'next:', ...steps.map(([c, why]) => `  ${why ? `${c.padEnd(w)}  # ${why}` : c}`));
    return lines.join('\n');
  });
}
