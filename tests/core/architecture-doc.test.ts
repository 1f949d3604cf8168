/**
 * docs/architecture.md claims nothing the code does not keep: every module
 * it names exists, every hook slot of LoopHooks is in its table, and every
 * registration it lists is one default-hooks.ts or kinds/index.ts makes.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { REPO } from '../helpers/home.js';

const doc = fs.readFileSync(path.join(REPO, 'docs', 'architecture.md'), 'utf8');

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const p = path.join(dir, d.name);
    return d.isDirectory() ? sources(p) : p.endsWith('.ts') ? [path.relative(REPO, p)] : [];
  });
}

/** Where a name in the doc points: repo-relative (src/, tests/), relative to src/core or src/, or a bare file name somewhere in src/. */
function resolves(name: string, all: readonly string[]): boolean {
  if (/^(src|tests|bench|scripts)\//.test(name)) return fs.existsSync(path.join(REPO, name));
  if (name.includes('/')) return ['src/core/', 'src/'].some((p) => fs.existsSync(path.join(REPO, p + name)));
  return all.some((f) => path.basename(f) === name);
}

test('every module docs/architecture.md names exists', () => {
  const all = sources(path.join(REPO, 'src'));
  const named = new Set([...doc.matchAll(/(?<![\w.-])((?:[\w-]+\/)*[\w.-]+\.ts)\b/g)].map((m) => m[1]!));
  assert.ok(named.size > 60, `only ${named.size} module names found: the pattern no longer reads the doc`);
  const missing = [...named].filter((n) => !resolves(n, all));
  assert.deepEqual(missing, []);
});

test('docs/architecture.md has every LoopHooks slot in its table', () => {
  const hooks = fs.readFileSync(path.join(REPO, 'src/core/run/loop-hooks.ts'), 'utf8');
  const body = /export interface LoopHooks \{([\s\S]*?)\n\}/.exec(hooks)?.[1] ?? '';
  const slots = [...body.matchAll(/^\s+(\w+)\??:/gm)].map((m) => m[1]!);
  assert.ok(slots.length >= 10, 'LoopHooks not found in loop-hooks.ts');
  const rows = slots.filter((s) => !new RegExp('^\\| `' + s + '(\\[\\])?`', 'm').test(doc));
  assert.deepEqual(rows, []);
});

test('every hook docs/architecture.md lists as registered is registered in default-hooks.ts', () => {
  const defaults = fs.readFileSync(path.join(REPO, 'src/core/run/default-hooks.ts'), 'utf8');
  const table = doc.slice(doc.indexOf('| slot ('), doc.indexOf('| event kinds'));
  const called = [...table.matchAll(/`(\w+)\(\)`/g)].map((m) => m[1]!);
  assert.ok(called.length > 10);
  const absent = called.filter((f) => !new RegExp(`\\b${f}\\(`).test(defaults));
  assert.deepEqual(absent, []);
});

test('docs/architecture.md lists every capability of kinds/index.ts', () => {
  const index = fs.readFileSync(path.join(REPO, 'src/core/kinds/index.ts'), 'utf8');
  const list = /CAPABILITIES[^=]*=\s*\[([^\]]*)\]/.exec(index)?.[1] ?? '';
  const names = list.split(',').map((s) => s.trim()).filter(Boolean);
  assert.ok(names.length >= 5);
  const absent = names.filter((n) => !doc.includes(`\`kinds/${n}.ts\``));
  assert.deepEqual(absent, []);
});
