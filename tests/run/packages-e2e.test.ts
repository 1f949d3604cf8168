/**
 * An environment's packages end to end: a run of the real sandbox
 * (bubblewrap) builds the cache of its environment's npm packages (a
 * tarball packed by the test) when it is missing, and its shell finds the
 * package's bin on PATH under /opt/openboa/packages, read-only; a second
 * session of the environment uses that cache without building; a build
 * that fails is a session.error naming the package and the log, and the run
 * ends idle without asking the model.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { bench, BWRAP, toolResults } from '../helpers/run.js';
import { packHello } from '../helpers/npm-fixture.js';
import { whenExists } from '../helpers/home.js';
import { ensurePackages } from '../../src/core/packages/package-build.js';
import { cacheSpot, packagesKey } from '../../src/core/packages/package-cache.js';

const skip = BWRAP ? false : 'needs bubblewrap (the cache is mounted at /opt/openboa/packages)';

const run = (id: string) => ({
  toolUses: [{ id: `toolu_${id}`, name: 'bash', input: { command: 'openboa-hello; command -v openboa-hello; touch /opt/openboa/packages/x 2>&1 | grep -o Read-only' } }],
});

test('packages: the first run builds the cache, the package is on PATH in the sandbox, read-only; a second session uses the same cache', { skip }, async (t) => {
  const tgz = packHello(t);
  const b = await bench(t, { steps: [run('a'), { text: 'done' }, run('b'), { text: 'done' }], agent: { environment: 'pkgs' } });
  b.h.write('environments/pkgs.yaml', `packages:\n  npm: ["file:${tgz}"]\n`);
  const first = b.session('use the tool');
  await b.wake(first);
  const second = b.session('use it again');
  await b.wake(second);
  for (const [req, id] of [[1, 'a'], [3, 'b']] as const) {
    const out = toolResults(b.fake.requests[req]!).get(`toolu_${id}`)!.text;
    assert.equal(out, 'hello from the package, in /opt/openboa/packages/npm/node_modules/openboa-hello/bin\n/opt/openboa/packages/npm/node_modules/.bin/openboa-hello\nRead-only');
  }
  const facts = (id: string) => JSON.parse(fs.readFileSync(path.join(b.store.paths(id).runtime, 'packages.json'), 'utf8')) as { built_now: boolean; cache: string };
  assert.equal(facts(first).built_now, true);
  assert.equal(facts(second).built_now, false);
  assert.equal(facts(second).cache, facts(first).cache);
  const envDir = path.join(b.h.root, '.openboa', 'env-cache', 'pkgs');
  const hash = path.basename(path.dirname(facts(first).cache)).replace(/\.builds$/, '');
  assert.equal(facts(first).cache, `.openboa/env-cache/pkgs/${hash}.builds/0`);
  assert.deepEqual(fs.readdirSync(path.join(envDir, `${hash}.builds`)), ['0']);
  assert.deepEqual(fs.readdirSync(path.join(envDir, `${hash}.runs`)), [], 'each run took its pin away as it ended');
});

test('packages: a rebuild while a session runs leaves that sandbox its build; the old build goes once no run has it', { skip }, async (t) => {
  const tgz = packHello(t);
  // The shell uses the package, waits while the test rebuilds the cache, and uses it again (a shell of the same sandbox).
  const command = 'openboa-hello; touch /workspace/used-once; while [ ! -e /workspace/rebuilt ]; do sleep 0.05; done; openboa-hello; ls -1 /opt/openboa/packages';
  const b = await bench(t, { steps: [{ toolUses: [{ id: 'toolu_r', name: 'bash', input: { command } }] }, { text: 'done' }], agent: { environment: 'pkgs' } });
  b.h.write('environments/pkgs.yaml', `packages:\n  npm: ["file:${tgz}"]\n`);
  const packages = { npm: [`file:${tgz}`], apt: [] };
  const spot = cacheSpot(b.h.home, 'pkgs', packagesKey(b.h.home, packages));
  const build = (o: { rebuild?: boolean; sweep?: boolean }) => ensurePackages({ home: b.h.home, environmentId: 'pkgs', packages, env: process.env, clock: b.deps.clock, signal: AbortSignal.timeout(120_000), ...o });
  const id = b.session('use the tool');
  const running = b.wake(id);
  await whenExists(path.join(b.store.paths(id).workspace, 'used-once'));
  const re = await build({ rebuild: true });
  const builds = `${spot.dir}.builds`;
  const kept = fs.existsSync(builds) ? fs.readdirSync(builds).sort() : [];
  fs.writeFileSync(path.join(b.store.paths(id).workspace, 'rebuilt'), '');
  await running;
  const out = toolResults(b.fake.requests[1]!).get('toolu_r')!.text;
  const hello = 'hello from the package, in /opt/openboa/packages/npm/node_modules/openboa-hello/bin\n';
  assert.equal(out, `${hello}${hello}manifest.json\nnpm`);
  assert.ok(re.ok && re.built);
  assert.notEqual(re.build, '0');
  assert.deepEqual(re.removed, [], 'the running session had the first build: it stayed');
  assert.deepEqual(kept, ['0', re.build].sort());
  // The run is over: the next build of the environment removes the build it had.
  const after = await build({ sweep: true });
  assert.ok(after.ok && !after.built);
  assert.deepEqual([after.build, after.removed], [re.build, ['0']]);
  assert.deepEqual(fs.readdirSync(builds), [re.build]);
});

test('packages: a failed install is a session.error naming the package and the kept log; the run ends idle without a model request, and is not retried', { skip }, async (t) => {
  const b = await bench(t, { steps: [{ text: 'never asked' }], agent: { environment: 'broken' } });
  b.h.write('environments/broken.yaml', 'packages:\n  npm: ["file:vendor/missing-1.0.0.tgz"]\n');
  const id = b.session('go');
  const r = await b.wake(id);
  assert.equal(b.fake.requests.length, 0);
  const errors = b.events(id).flatMap((e) => (e.type === 'session.error' ? [e.error] : []));
  assert.equal(errors.length, 1);
  assert.equal(errors[0]!.code, 'packages_failed');
  const log = /the install's log: (\.openboa\/env-cache\/broken\/[0-9a-f]{16}\.log)/.exec(errors[0]!.message)?.[1];
  assert.ok(log, errors[0]!.message);
  assert.match(errors[0]!.message, /npm package file:vendor\/missing-1\.0\.0\.tgz: no such file/);
  assert.match(fs.readFileSync(path.join(b.h.root, log), 'utf8'), /no such tarball: file:vendor\/missing-1\.0\.0\.tgz/);
  assert.equal(r.status, 'idle');
  assert.equal(r.stop_reason?.type, 'retries_exhausted');
  assert.equal(r.failure?.code, 'packages_failed');
  assert.equal(r.retry_at, null);
  // Nothing is left to do until a person sends something: no cache, no retry.
  assert.equal((await b.wake(id)).outcome, 'skipped');
  const envDir = path.join(b.h.root, '.openboa', 'env-cache', 'broken');
  const left = fs.readdirSync(envDir).filter((e) => !e.endsWith('.log'));
  assert.deepEqual(left.map((e) => e.replace(/^[0-9a-f]{16}/, '<hash>')), ['<hash>.runs']);
  assert.deepEqual(fs.readdirSync(path.join(envDir, left[0]!)), [], 'the run took its pin away');
});
