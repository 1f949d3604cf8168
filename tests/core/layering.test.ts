/**
 * STYLE point 1: src/core knows nothing of the daemon or the CLI, and only
 * src/cli touches process.exit.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { REPO } from '../helpers/home.js';

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const p = path.join(dir, d.name);
    return d.isDirectory() ? sources(p) : p.endsWith('.ts') ? [p] : [];
  });
}

test('src/core imports neither src/daemon nor src/cli', () => {
  const core = sources(path.join(REPO, 'src', 'core'));
  assert.ok(core.length > 5);
  const leaks = core.filter((f) => /from\s+['"](\.\.\/)+(cli|daemon)\//.test(fs.readFileSync(f, 'utf8')));
  assert.deepEqual(leaks.map((f) => path.relative(REPO, f)), []);
});

test('only src/cli calls process.exit', () => {
  const all = sources(path.join(REPO, 'src'));
  const offenders = all.filter((f) => !f.includes(`${path.sep}cli${path.sep}`) && /process\.exit\(/.test(fs.readFileSync(f, 'utf8')));
  assert.deepEqual(offenders.map((f) => path.relative(REPO, f)), []);
});
