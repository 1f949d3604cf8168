#!/usr/bin/env node
// What `npm test` runs first: the build (dist/, which the CLI tests run as the
// real binary) and the type-check of src, tests and bench. The two are
// independent tsc runs, each mostly on one core, so they run at the same
// time. Each one's output is printed whole once it ends (not interleaved);
// the exit code is the first failure's, else 0.
import { spawn } from 'node:child_process';

const SCRIPTS = ['build', 'typecheck'];
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

function run(script) {
  return new Promise((resolve) => {
    const child = spawn(npm, ['run', '--silent', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('error', (e) => resolve({ script, code: 1, out: `${out}${e.message}\n` }));
    child.on('close', (code, signal) => resolve({ script, code: code ?? (signal ? 1 : 0), out }));
  });
}

const results = await Promise.all(SCRIPTS.map(run));
for (const r of results) {
  if (r.out) process.stdout.write(r.out);
  if (r.code !== 0) process.stderr.write(`npm run ${r.script} failed (exit ${r.code})\n`);
}
process.exit(results.find((r) => r.code !== 0)?.code ?? 0);
