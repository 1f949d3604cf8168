/** `npm start` rebuilds only when something it is built from changed. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
// @ts-expect-error: a plain .mjs script, no types
import { stale } from '../../scripts/build-if-stale.mjs';

test('dist is stale until built, fresh after, stale again when a source, tsconfig or package.json changes', (t) => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'openboa-stale-'));
  t.after(() => fs.rmSync(root, { recursive: true, force: true }));
  fs.mkdirSync(path.join(root, 'src', 'core'), { recursive: true });
  fs.writeFileSync(path.join(root, 'src', 'core', 'a.ts'), 'export {};\n');
  fs.writeFileSync(path.join(root, 'tsconfig.json'), '{}');
  fs.writeFileSync(path.join(root, 'package.json'), '{}');
  assert.equal(stale(root), true, 'never built');
  fs.mkdirSync(path.join(root, 'dist'));
  const stamp = path.join(root, 'dist', '.built');
  fs.writeFileSync(stamp, 'x');
  const past = (s: number) => new Date(Date.now() - s * 1000);
  for (const f of ['src/core/a.ts', 'src/core', 'src', 'tsconfig.json', 'package.json']) fs.utimesSync(path.join(root, f), past(60), past(60));
  assert.equal(stale(root), false, 'built after every source');
  fs.utimesSync(path.join(root, 'src', 'core', 'a.ts'), new Date(), new Date());
  assert.equal(stale(root), true, 'a source changed');
  fs.utimesSync(stamp, new Date(Date.now() + 1000), new Date(Date.now() + 1000));
  assert.equal(stale(root), false);
  fs.rmSync(path.join(root, 'src', 'core', 'a.ts'));
  fs.utimesSync(stamp, past(30), past(30));
  assert.equal(stale(root), true, 'a source removed (its folder changed)');
});
