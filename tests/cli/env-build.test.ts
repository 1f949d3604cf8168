/**
 * `openboa env build`: an environment's packages built into their cache
 * once, again with --rebuild; a builder killed with -9 in the middle of
 * npm's install leaves no cache that counts (the next build removes its
 * temp folder and builds); two builders at once build it once. npm runs
 * for real, against a tarball packed by the test or a registry on
 * 127.0.0.1 that holds its answers back to catch a build in the middle.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CLI, cli, cliInProcess } from '../helpers/cli.js';
import { tempHome } from '../helpers/home.js';
import { helloRegistry, packHello } from '../helpers/npm-fixture.js';

interface Built {
  hash: string;
  build: string;
  removed_builds: string[];
  built: boolean;
  cache: string;
  log: string;
}

test('openboa env build builds the cache once; again it is already built; --rebuild builds it anew; an environment without packages has nothing to build', async (t) => {
  const { root, write } = tempHome(t);
  const tgz = packHello(t);
  write('environments/tools.yaml', `packages:\n  npm: ["file:${tgz}"]\n`);
  const first = await cliInProcess(['env', 'build', 'tools', '--json'], { home: root });
  assert.equal(first.code, 0, first.stderr);
  const a = JSON.parse(first.stdout) as Built;
  assert.equal(a.built, true);
  assert.equal(a.cache, `.openboa/env-cache/tools/${a.hash}`);
  assert.ok(fs.existsSync(path.join(root, a.cache, 'npm', 'node_modules', '.bin', 'openboa-hello')));
  assert.match(fs.readFileSync(path.join(root, a.log), 'utf8'), /\$ npm install --prefix \S+ --no-audit --no-fund --ignore-scripts --no-update-notifier -- \S+openboa-hello-1\.0\.0\.tgz\n/);
  const again = await cliInProcess(['env', 'build', 'tools'], { home: root });
  assert.match(again.stdout, new RegExp(`^already built: \\.openboa/env-cache/tools/${a.hash} \\(build 0, at `));
  const re = JSON.parse((await cliInProcess(['env', 'build', 'tools', '--rebuild', '--json'], { home: root })).stdout) as Built;
  assert.deepEqual([re.built, re.hash], [true, a.hash]);
  assert.match(re.build, /^[0-9a-f]{12}$/);
  // No session had the first build: it is gone, and the cache's name leads to the new one.
  assert.deepEqual(re.removed_builds, ['0']);
  assert.deepEqual(fs.readdirSync(path.join(root, `${a.cache}.builds`)), [re.build]);
  assert.equal(fs.readlinkSync(path.join(root, a.cache)), `${a.hash}.builds/${re.build}`);
  assert.ok(fs.existsSync(path.join(root, a.cache, 'manifest.json')));
  const none = await cliInProcess(['env', 'build', 'local'], { home: root });
  assert.equal(none.code, 0);
  assert.match(none.stdout, /lists no packages: nothing to build/);
});

test('openboa env build: a failed install exits 1 naming the package and the kept log (apt: an unknown package, offline)', async (t) => {
  const { root, write } = tempHome(t);
  write('environments/apt.yaml', 'packages:\n  apt: [openboa-no-such-package]\n');
  const r = await cliInProcess(['env', 'build', 'apt'], { home: root });
  assert.equal(r.code, 1);
  const log = /the install's log: (\.openboa\/env-cache\/apt\/[0-9a-f]{16}\.log)/.exec(r.stderr)?.[1];
  assert.ok(log, r.stderr);
  assert.match(r.stderr, /apt cannot install openboa-no-such-package: .*openboa-no-such-package/);
  assert.match(fs.readFileSync(path.join(root, log), 'utf8'), /^\$ apt-get -s -q -o Debug::NoLocking=1 install --no-install-recommends openboa-no-such-package$/m);
  assert.deepEqual(fs.readdirSync(path.join(root, '.openboa', 'env-cache', 'apt')).filter((e) => !e.endsWith('.log')), []);
  // A name that could be read as an option never reaches apt or npm: the environment does not load.
  write('environments/opt.yaml', 'packages:\n  apt: ["--allow-unauthenticated"]\n  npm: ["--global"]\n');
  const bad = await cliInProcess(['env', 'build', 'opt'], { home: root });
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /packages\.apt\.0: expected a Debian package/);
});

/** The built CLI, as a process of its own: its stderr as it comes, and its end. */
function builder(root: string, env: NodeJS.ProcessEnv): { child: ChildProcess; stderr: () => string; done: Promise<{ code: number | null; stdout: string }> } {
  const child = spawn(process.execPath, [CLI, '--home', root, 'env', 'build', 'reg'], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (err += d));
  const done = new Promise<{ code: number | null; stdout: string }>((r) => child.on('close', (code) => r({ code, stdout: out })));
  return { child, stderr: () => err, done };
}

/** Resolves once `check` holds, looking again each time the process writes to stderr. */
function whenStderr(b: ReturnType<typeof builder>, check: (text: string) => boolean): Promise<void> {
  return new Promise((resolve) => {
    if (check(b.stderr())) return resolve();
    const look = () => {
      if (!check(b.stderr())) return;
      b.child.stderr!.off('data', look);
      resolve();
    };
    b.child.stderr!.on('data', look);
  });
}

test('openboa env build: killed with -9 in the middle of the install, no cache counts; then two builders at once build it once', { timeout: 120_000 }, async (t) => {
  const { root, write } = tempHome(t);
  const registry = await helloRegistry(t, packHello(t), { hold: true });
  const npmCache = fs.mkdtempSync(path.join(os.tmpdir(), 'openboa-npm-cache-'));
  t.after(() => fs.rmSync(npmCache, { recursive: true, force: true }));
  const env = { npm_config_registry: registry.url, npm_config_cache: npmCache };
  write('environments/reg.yaml', 'packages:\n  npm: [openboa-hello@1.0.0]\n');
  const envDir = path.join(root, '.openboa', 'env-cache', 'reg');

  const killed = builder(root, env);
  await registry.held(); // npm asked the registry: the build is under way
  killed.child.kill('SIGKILL');
  await killed.done;
  const left = fs.readdirSync(envDir);
  assert.ok(left.some((e) => e.startsWith('.tmp-')), `a temp folder of the killed build: ${left.join(', ')}`);
  assert.deepEqual(left.filter((e) => /^[0-9a-f]{16}$/.test(e)), [], 'no cache folder');

  // The next builder breaks the dead one's lock and holds the registry's answer; a second waits for it.
  const one = builder(root, env);
  const two = builder(root, env);
  // One of them says it waits: the other holds the lock (and cannot finish while the registry holds its answer).
  // Were both building, both would ask the registry (the killed one asked once): that ends the wait too, and the test fails below.
  await Promise.race([whenStderr(one, (s) => s.includes('waiting:')), whenStderr(two, (s) => s.includes('waiting:')), registry.held(3)]);
  registry.release();
  const [a, b] = await Promise.all([one.done, two.done]);
  assert.deepEqual([a.code, b.code], [0, 0], `${one.stderr()}\n${two.stderr()}`);
  const said = [a.stdout, b.stdout].map((s) => s.split(' ')[0]).sort();
  assert.deepEqual(said, ['already', 'built']);
  const after = fs.readdirSync(envDir);
  assert.deepEqual(after.filter((e) => e.startsWith('.tmp-')), [], 'the dead build\'s temp folder is gone');
  const cache = after.filter((e) => /^[0-9a-f]{16}$/.test(e));
  assert.equal(cache.length, 1);
  assert.ok(fs.existsSync(path.join(envDir, cache[0]!, 'npm', 'node_modules', '.bin', 'openboa-hello')));
  // And from now on it is built.
  const r = await cli(['env', 'build', 'reg', '--json'], { home: root, env });
  assert.equal((JSON.parse(r.stdout) as Built).built, false);
});
