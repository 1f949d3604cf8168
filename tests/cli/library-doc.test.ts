/** docs/library.md's script, taken from the page and run against the built package: the page cannot drift from the code. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { REPO, tempHome } from '../helpers/home.js';
import { NO_SHELL } from '../helpers/run.js';

test('the script in docs/library.md creates a session, sends a message and prints the reply', { skip: NO_SHELL }, (t) => {
  const page = fs.readFileSync(path.join(REPO, 'docs', 'library.md'), 'utf8');
  const code = /```js\n(\/\/ example: talk-once\.mjs[^\n]*\n[\s\S]*?)```/.exec(page)?.[1];
  assert.ok(code, 'the page has the example script');
  // Inside the package's folder, so `import ... from 'openboa'` resolves to the package itself (dist/index.js).
  fs.mkdirSync(path.join(REPO, '.cache'), { recursive: true });
  const file = path.join(REPO, '.cache', `talk-once-${process.pid}.mjs`);
  fs.writeFileSync(file, code);
  t.after(() => fs.rmSync(file, { force: true }));
  const h = tempHome(t);
  const r = spawnSync(process.execPath, [file], { env: { ...process.env, OPENBOA_HOME: h.root, ANTHROPIC_API_KEY: '' }, encoding: 'utf8', timeout: 120_000 });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^Hello! Let me look around my workspace first\.\n/);
  assert.match(r.stdout, /\nturn over: idle \(end_turn\)\n$/);
  assert.equal(fs.readdirSync(path.join(h.root, 'sessions')).length, 1);
});
