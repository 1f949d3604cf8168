/**
 * How a person runs this openboa from where they are, for the commands a
 * hint prints: `openboa` when the one on PATH is this installation (a global
 * install, `npm link`), `npx openboa` when the folder is this package's own
 * checkout or a project that has it installed, else `node <its main.js>`,
 * which works anywhere. A hint that says `npx openboa` in a home where npx
 * cannot find it sends a new user nowhere.
 */
import fs from 'node:fs';
import path from 'node:path';
import { PACKAGE } from './package-root.js';

const real = (p: string): string | null => {
  try {
    return fs.realpathSync(p);
  } catch {
    return null;
  }
};

export function invocation(cwd: string, env: NodeJS.ProcessEnv, pkgRoot = PACKAGE.root): string {
  const main = path.join(pkgRoot, 'dist', 'cli', 'main.js');
  const mine = real(main) ?? main;
  for (const dir of (env.PATH ?? '').split(path.delimiter)) {
    if (dir && real(path.join(dir, 'openboa')) === mine) return 'openboa';
  }
  const root = real(pkgRoot) ?? pkgRoot;
  const here = real(cwd) ?? cwd;
  if (here === root || here.startsWith(root + path.sep)) return 'npx openboa';
  for (let dir = here; ; dir = path.dirname(dir)) {
    if (real(path.join(dir, 'node_modules', 'openboa')) === root) return 'npx openboa';
    if (path.dirname(dir) === dir) break;
  }
  return `node ${main}`;
}
