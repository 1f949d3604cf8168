/**
 * Environment packages without installing anything: which names the schema
 * takes (none that npm or apt could read as an option), the command lines
 * of a build (apt's, which need the network past the simulation, are
 * checked here), the key of an environment version and the shell's PATH,
 * and which builds of a cache a sweep keeps.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { EnvironmentDefinition } from '../../src/core/schema/index.js';
import { aptDownloadArgs, aptSimulateArgs, aptToFetch, dpkgExtractArgs, installEnv, npmInstallArgs, stripSetId } from '../../src/core/packages/package-install.js';
import { cacheSpot, currentBuild, packagesEnv, packagesKey, readManifest } from '../../src/core/packages/package-cache.js';
import { pinBuild, sweepBuilds, switchCurrent, unpinBuild } from '../../src/core/packages/package-pins.js';
import { tempHome } from '../helpers/home.js';

const parse = (packages: unknown) => EnvironmentDefinition.safeParse({ packages });

test('package names: registry names with versions, scoped names, local tarballs and Debian names pass; options, spaces and URLs do not', () => {
  for (const npm of ['cowsay', 'cowsay@1.6.0', 'typescript@^5.4.2', '@scope/tool@latest', 'lodash.merge@~4.6', 'file:vendor/tool-1.0.0.tgz', 'file:/abs/x y.tgz']) assert.ok(parse({ npm: [npm] }).success, npm);
  for (const apt of ['jq', 'ripgrep=13.0.0-4', 'libc6=2.36-9+deb12u1', 'g++']) assert.ok(parse({ apt: [apt] }).success, apt);
  for (const npm of ['-g', '--global', 'cowsay --global', 'Cowsay', 'https://x.test/a.tgz', 'git+ssh://x', 'file:vendor/tool', 'a@1.0 b', '', 'x@']) {
    const r = parse({ npm: [npm] });
    assert.ok(!r.success, npm);
    assert.match(r.error.issues[0]!.message, /expected an npm package/);
  }
  for (const apt of ['-y', '--allow-unauthenticated', 'jq curl', 'JQ', 'jq=', 'a']) assert.ok(!parse({ apt: [apt] }).success, apt);
  assert.ok(!parse({ pip: ['x'] }).success, 'an ecosystem openboa does not install is refused, not ignored');
  assert.deepEqual(EnvironmentDefinition.parse({}).packages, { npm: [], apt: [] });
});

test('the command lines of a build: npm ends its options before the packages and runs no install script; apt simulates, downloads exact versions and unpacks without root', () => {
  assert.deepEqual(npmInstallArgs('/c/.tmp-x/npm', ['cowsay@1.6.0']), ['npm', 'install', '--prefix', '/c/.tmp-x/npm', '--no-audit', '--no-fund', '--ignore-scripts', '--no-update-notifier', '--', 'cowsay@1.6.0']);
  assert.deepEqual(aptSimulateArgs(['jq']), ['apt-get', '-s', '-q', '-o', 'Debug::NoLocking=1', 'install', '--no-install-recommends', 'jq']);
  const simulation = [
    'NOTE: This is only a simulation!',
    'Inst libonig5 (6.9.8-1 Debian:12.5/stable [amd64])',
    'Inst jq [1.6-2.1] (1.6-2.1+deb12u2 Debian:12.15/oldstable [amd64]) []',
    'Inst libfoo:i386 (2:1.0~rc1 Debian:12.5/stable [i386])',
    'Conf jq (1.6-2.1+deb12u2 Debian:12.15/oldstable [amd64])',
  ].join('\n');
  assert.deepEqual(aptToFetch(simulation), ['libonig5=6.9.8-1', 'jq=1.6-2.1+deb12u2', 'libfoo:i386=2:1.0~rc1']);
  assert.deepEqual(aptDownloadArgs(['jq=1.6-2.1+deb12u2']), ['apt-get', 'download', '-q', 'jq=1.6-2.1+deb12u2']);
  assert.deepEqual(dpkgExtractArgs('/d/jq.deb', '/c/apt'), ['dpkg', '-x', '/d/jq.deb', '/c/apt']);
  // The daemon's secrets stay with the daemon; what installing needs goes along.
  assert.deepEqual(installEnv({ PATH: '/bin', ANTHROPIC_API_KEY: 'k', GITHUB_TOKEN: 't', HTTPS_PROXY: 'http://p', npm_config_registry: 'http://r/' }), { PATH: '/bin', HTTPS_PROXY: 'http://p', npm_config_registry: 'http://r/' });
});

test('the key of an environment version follows the lists and the bytes of a local tarball; the shell gets the bin folders first on PATH', (t) => {
  const h = tempHome(t, { bundled: false });
  h.write('vendor/t-1.0.0.tgz', 'one');
  const spec = { npm: ['file:vendor/t-1.0.0.tgz'], apt: [] };
  const k1 = packagesKey(h.home, spec);
  assert.match(k1, /^[0-9a-f]{16}$/);
  assert.equal(packagesKey(h.home, spec), k1);
  assert.notEqual(packagesKey(h.home, { npm: ['file:vendor/t-1.0.0.tgz', 'cowsay@1.6.0'], apt: [] }), k1);
  h.write('vendor/t-1.0.0.tgz', 'two');
  assert.notEqual(packagesKey(h.home, spec), k1, 'the same path with other bytes is another version');
  assert.deepEqual(packagesEnv({ npm: ['x'], apt: [] }, '/opt/openboa/packages', { PATH: '/usr/bin:/bin', HOME: '/workspace' }), { PATH: '/opt/openboa/packages/npm/node_modules/.bin:/usr/bin:/bin', HOME: '/workspace' });
  const apt = packagesEnv({ npm: [], apt: ['jq'] }, '/c', { PATH: '/usr/bin' });
  assert.match(apt.PATH!, /^\/c\/apt\/usr\/local\/bin:\/c\/apt\/usr\/bin:\/c\/apt\/bin:\/usr\/bin$/);
  assert.match(apt.LD_LIBRARY_PATH!, /\/c\/apt\/usr\/lib$|\/c\/apt\/lib$/);
});

test('builds and pins: a run pins the current build (the first one before any is built); a sweep keeps the current build and those live runs pinned, and drops the pins of sessions no run holds', (t) => {
  const h = tempHome(t, { bundled: false });
  const spot = cacheSpot(h.home, 'env', 'a'.repeat(16));
  const manifest = (build: string) => {
    fs.mkdirSync(path.join(spot.builds, build), { recursive: true });
    fs.writeFileSync(path.join(spot.builds, build, 'manifest.json'), JSON.stringify({ format: 1, environment_id: 'env', hash: spot.hash, npm: [], apt: [], built_at: '2026-01-01T00:00:00.000Z' }));
  };
  const [live, gone] = ['019a0000-0000-7000-8000-000000000001', '019a0000-0000-7000-8000-000000000002'];
  fs.mkdirSync(h.home.session(live).lease, { recursive: true }); // a run of `live` holds its lease
  assert.equal(pinBuild(spot, gone), '0', 'nothing built yet: the first build, which its run will build');
  manifest('0');
  switchCurrent(spot, '0');
  assert.equal(readManifest(spot)?.hash, spot.hash);
  assert.equal(pinBuild(spot, live), '0');
  manifest('0123456789ab');
  switchCurrent(spot, '0123456789ab');
  manifest('ba9876543210'); // an older build no one has
  assert.deepEqual(sweepBuilds(h.home, spot), ['ba9876543210']);
  assert.deepEqual(fs.readdirSync(spot.builds).sort(), ['0', '0123456789ab']);
  assert.deepEqual(fs.readdirSync(spot.runs), [live], 'the pin of a session no run holds is dropped');
  unpinBuild(spot, live, '0');
  assert.deepEqual(sweepBuilds(h.home, spot), ['0']);
  assert.equal(currentBuild(spot), '0123456789ab');
  // A manifest of another cache (a folder copied in) is not this cache's.
  fs.writeFileSync(path.join(spot.builds, '0123456789ab', 'manifest.json'), JSON.stringify({ format: 1, environment_id: 'other', hash: spot.hash, npm: [], apt: [], built_at: '2026-01-01T00:00:00.000Z' }));
  assert.equal(readManifest(spot), null);
});

test('a build clears the setuid and setgid bits it unpacked, and follows no symlink out of its folder', (t) => {
  const h = tempHome(t, { bundled: false });
  const build = path.join(h.root, 'build');
  fs.mkdirSync(path.join(build, 'apt/usr/bin'), { recursive: true });
  const file = (rel: string, mode: number) => {
    fs.writeFileSync(path.join(build, rel), '#!/bin/sh\n');
    fs.chmodSync(path.join(build, rel), mode);
  };
  file('apt/usr/bin/su-like', 0o4755);
  file('apt/usr/bin/group-tool', 0o2711);
  file('apt/usr/bin/plain', 0o755);
  // Outside the build, reached only through a symlink in it: left as it is.
  const outside = path.join(h.root, 'outside-tool');
  fs.writeFileSync(outside, 'x');
  fs.chmodSync(outside, 0o4755);
  fs.symlinkSync(outside, path.join(build, 'apt/usr/bin/link'));
  assert.deepEqual(stripSetId(build).sort(), ['apt/usr/bin/group-tool', 'apt/usr/bin/su-like']);
  const mode = (p: string) => fs.lstatSync(p).mode & 0o7777;
  assert.equal(mode(path.join(build, 'apt/usr/bin/su-like')), 0o755);
  assert.equal(mode(path.join(build, 'apt/usr/bin/group-tool')), 0o711);
  assert.equal(mode(path.join(build, 'apt/usr/bin/plain')), 0o755);
  assert.equal(mode(outside), 0o4755);
});
