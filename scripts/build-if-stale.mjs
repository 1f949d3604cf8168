#!/usr/bin/env node
// Builds dist/ only when it is older than what it is built from, so `npm start`
// on a built checkout starts at once instead of spending seconds in tsc.
// Stale means: dist/.built is missing, or any file under src/, tsconfig.json
// or package.json is newer than it. The check reads directory entries and
// mtimes only (a few ms for this tree).
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

function newest(p) {
  const st = statSync(p);
  if (!st.isDirectory()) return st.mtimeMs;
  let m = st.mtimeMs; // a deleted file changes its folder's mtime
  for (const name of readdirSync(p)) m = Math.max(m, newest(path.join(p, name)));
  return m;
}

/** Whether dist/ under `root` must be rebuilt. */
export function stale(root) {
  let built;
  try {
    built = statSync(path.join(root, 'dist', '.built')).mtimeMs;
  } catch {
    return true; // never built by this script
  }
  const inputs = ['src', 'tsconfig.json', 'package.json'].map((p) => path.join(root, p));
  return inputs.some((p) => {
    try {
      return newest(p) > built;
    } catch {
      return false;
    }
  });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  if (stale(root)) {
    const r = spawnSync('npm', ['run', '--silent', 'build'], { cwd: root, stdio: 'inherit' });
    if (r.status !== 0) process.exit(r.status ?? 1);
    writeFileSync(path.join(root, 'dist', '.built'), `${new Date().toISOString()}\n`);
  }
}
