/**
 * The package a user installs: `npm pack` makes a tarball that `npm i -g`
 * installs on its own (native dependencies built, the bundled agents and docs
 * in it), and the installed `openboa` makes a home anywhere and runs the
 * offline demo there. Its hints name the command that works where they are
 * printed. The install compiles node-pty and better-sqlite3, so this is the
 * slowest test of the suite (about a minute and a half of CPU).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { REPO } from '../helpers/home.js';
import { NO_SHELL } from '../helpers/run.js';
import { invocation } from '../../src/cli/invocation.js';

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

function run(cmd: string, args: string[], o: { cwd: string; env?: NodeJS.ProcessEnv }) {
  const r = spawnSync(cmd, args, { cwd: o.cwd, env: { ...process.env, ...o.env }, encoding: 'utf8', timeout: 600_000 });
  return { code: r.status, stdout: r.stdout ?? '', stderr: `${r.stderr ?? ''}${r.error ? String(r.error) : ''}` };
}

test('npm pack → npm i -g into a temp prefix → openboa init in a temp folder → a demo run', { skip: NO_SHELL, timeout: 900_000 }, async (t) => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'openboa-pack-'));
  t.after(() => fs.rmSync(tmp, { recursive: true, force: true }));
  // dist/ is built by `npm test` before the tests run: pack it as it is.
  const packed = run(npm, ['pack', '--ignore-scripts', '--json', '--pack-destination', tmp], { cwd: REPO });
  assert.equal(packed.code, 0, packed.stderr);
  const file = (JSON.parse(packed.stdout) as Array<{ filename: string; files: Array<{ path: string }> }>)[0]!;
  const inside = new Set(file.files.map((f) => f.path));
  for (const f of ['dist/cli/main.js', 'dist/index.js', 'agents/demo/agent.yaml', 'agents/demo/script.yaml', 'agents/claude/agent.yaml', 'environments/local.yaml', 'data/pricing.json', 'docs/format.md', 'README.md', 'web/inspector/index.html', 'web/inspector/app.js']) assert.ok(inside.has(f), `the package holds ${f}`);
  assert.ok(![...inside].some((f) => f.startsWith('src/') || f.startsWith('tests/') || f.startsWith('sessions/')), 'no sources, tests or sessions in the package');

  // Native modules are built against this Node's own headers (the machine may have no route to nodejs.org).
  const nodedir = path.dirname(path.dirname(process.execPath));
  const prefix = path.join(tmp, 'prefix');
  const installed = run(npm, ['install', '-g', '--prefix', prefix, '--prefer-offline', '--no-audit', '--no-fund', path.join(tmp, file.filename)], { cwd: tmp, env: { npm_config_nodedir: nodedir } });
  assert.equal(installed.code, 0, installed.stderr);
  const bin = path.join(prefix, 'bin');
  const env = { PATH: `${bin}${path.delimiter}${process.env.PATH}`, OPENBOA_HOME: '', ANTHROPIC_API_KEY: '' };

  const home = path.join(tmp, 'somewhere', 'home');
  const init = run('openboa', ['init', home], { cwd: tmp, env });
  assert.equal(init.code, 0, init.stderr);
  assert.match(init.stdout, /created a home in /);
  // The hints name the command that works here: the openboa on PATH, not npx (which finds nothing in this folder).
  assert.match(init.stdout, /\n {2}openboa doctor +# can sessions run here\?/);
  assert.doesNotMatch(init.stdout, /npx/);

  const created = run('openboa', ['session', 'create', '--agent', 'demo'], { cwd: home, env });
  assert.equal(created.code, 0, created.stderr);
  const id = created.stdout.trim();
  assert.equal(run('openboa', ['send', id, 'hello'], { cwd: home, env }).code, 0);
  const woke = run('openboa', ['wake', id.slice(-8)], { cwd: home, env });
  assert.equal(woke.code, 0, woke.stderr);
  assert.match(woke.stdout, /manual: idle, end_turn/);
  assert.match(fs.readFileSync(path.join(home, 'sessions', id, 'workspace', 'notes.md'), 'utf8'), /First visit/);
  // better-sqlite3 was built too: search works.
  const found = run('openboa', ['search', 'hello', '--json'], { cwd: home, env });
  assert.equal(found.code, 0, found.stderr);
  assert.ok((JSON.parse(found.stdout) as { hits: unknown[] }).hits.length > 0);
});

test('hints name how to run openboa from where they are printed: on PATH, npx inside a project that has it, else node and its path', (t) => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'openboa-inv-'));
  t.after(() => fs.rmSync(tmp, { recursive: true, force: true }));
  const pkg = path.join(tmp, 'pkg');
  fs.mkdirSync(path.join(pkg, 'dist', 'cli'), { recursive: true });
  fs.writeFileSync(path.join(pkg, 'dist', 'cli', 'main.js'), '');
  const elsewhere = path.join(tmp, 'elsewhere');
  fs.mkdirSync(elsewhere);
  assert.equal(invocation(elsewhere, { PATH: '/usr/bin' }, pkg), `node ${path.join(pkg, 'dist', 'cli', 'main.js')}`);
  assert.equal(invocation(path.join(pkg, 'dist'), { PATH: '/usr/bin' }, pkg), 'npx openboa', 'inside the package checkout');
  const project = path.join(tmp, 'project');
  fs.mkdirSync(path.join(project, 'node_modules'), { recursive: true });
  fs.symlinkSync(pkg, path.join(project, 'node_modules', 'openboa'));
  fs.mkdirSync(path.join(project, 'sub'));
  assert.equal(invocation(path.join(project, 'sub'), { PATH: '/usr/bin' }, pkg), 'npx openboa', 'a project that has it installed');
  const bin = path.join(tmp, 'bin');
  fs.mkdirSync(bin);
  fs.symlinkSync(path.join(pkg, 'dist', 'cli', 'main.js'), path.join(bin, 'openboa'));
  assert.equal(invocation(elsewhere, { PATH: `/usr/bin${path.delimiter}${bin}` }, pkg), 'openboa', 'the openboa on PATH is this one');
  fs.writeFileSync(path.join(tmp, 'other'), '');
  fs.rmSync(path.join(bin, 'openboa'));
  fs.symlinkSync(path.join(tmp, 'other'), path.join(bin, 'openboa'));
  assert.equal(invocation(elsewhere, { PATH: bin }, pkg), `node ${path.join(pkg, 'dist', 'cli', 'main.js')}`, 'another openboa on PATH is not this one');
});
