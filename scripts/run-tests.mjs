#!/usr/bin/env node
// Runs every tests/**/*.test.ts with node's test runner (through tsx).
// Node 20's --test does not expand globs, so the files are listed here.
// Extra arguments are passed on, e.g. `npm test -- --test-name-pattern=lease`.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';

function find(dir) {
  return readdirSync(dir).flatMap((name) => {
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) return name === 'fixtures' ? [] : find(p);
    return name.endsWith('.test.ts') ? [p] : [];
  });
}

const args = process.argv.slice(2);
const only = args.filter((a) => !a.startsWith('-'));
const flags = args.filter((a) => a.startsWith('-'));
// A folder stands for every test file below it (`npm run test:unit` passes the in-process tier's folders).
const files = only.length ? only.flatMap((a) => (statSync(a).isDirectory() ? find(a).sort() : [a])) : find('tests').sort();
// Four files at a time on 2 cores: a file waits on child processes, watchers and sockets for a
// good part of its time. Measured on 2 cores (the whole suite, given the CPU): 2 at a time 63 s,
// 3 58 s, 4 57 s, 6 57 s; the suite needs about 108 s of CPU, so 54 s is the floor there.
const r = spawnSync(
  process.execPath,
  // A generous per-test limit: it is there to end a hang, not to time a test (a loaded 2-core
  // machine can take minutes over a file of many CLI processes).
  ['--import', 'tsx', '--test', '--test-concurrency=4', '--test-timeout=900000', ...flags, ...files],
  { stdio: 'inherit', env: { ...process.env, NODE_NO_WARNINGS: '1' } },
);
process.exit(r.status ?? 1);
