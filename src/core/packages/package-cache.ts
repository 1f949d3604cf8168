/**
 * Where an environment's packages live once built, and which build an
 * environment version means (docs/sandbox.md, "Packages"). Per environment
 * and key, under `<home>/.openboa/env-cache/<env>/`:
 *
 * - `<hash>.builds/<build>/`: one build, holding `npm/` (an npm prefix:
 *   node_modules/.bin), `apt/` (the .debs unpacked) and `manifest.json`.
 *   The first build of a key is `0`, each rebuild a new name.
 * - `<hash>`: a symlink to the current build (`<hash>.builds/<build>`),
 *   replaced by a rename when a rebuild is done, so it always names a
 *   whole build.
 * - `<hash>.runs/<session>`: the build a running session's sandbox has
 *   (package-pins.ts): a rebuild never removes a build some run still has.
 * - `<hash>.log` the last build's log, `<hash>.lock` the lock of whoever
 *   builds it.
 *
 * A cache counts as built exactly when `<hash>` names a build whose
 * manifest reads and is this cache's: a build is made in a temp folder
 * beside it and renamed into `<hash>.builds/` (package-build.ts), so a
 * builder killed halfway leaves only a temp folder, which the next builder
 * removes.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Home } from '../foundation/home.js';
import type { LockPaths } from '../foundation/lease.js';
import { PackagesManifest, type EnvironmentPackages } from '../schema/index.js';

/** Where the cache is mounted in a bubblewrap sandbox (read-only). */
export const PACKAGES_TARGET = '/opt/openboa/packages';

/**
 * Bumped when what a build makes changes, so older caches are not taken for newer ones.
 * 2: builds under `<hash>.builds/`, `<hash>` a symlink to the current one (a cache of format 1 is a
 * folder `<hash>/` that nothing reads any more; a person may remove it).
 */
const BUILD_FORMAT = 2;

export interface CacheSpot {
  environmentId: string;
  hash: string;
  /** The current build: a symlink to one folder of `builds`, present only once one is built. */
  dir: string;
  /** The folder of its builds (`<hash>.builds/`). */
  builds: string;
  /** The folder of the builds running sessions have (`<hash>.runs/`, package-pins.ts). */
  runs: string;
  /** The last build's log (kept after a failure too). */
  log: string;
  /** The lock of its builder (foundation/lease.ts). */
  lock: LockPaths;
  /** The environment's folder of caches, where temp folders are made. */
  envDir: string;
}

export const envCacheRoot = (home: Home) => path.join(home.root, '.openboa', 'env-cache');

/** Whether the environment lists any package. */
export const hasPackages = (p: EnvironmentPackages) => p.npm.length > 0 || p.apt.length > 0;

/** A `file:` spec's tarball as an absolute path (a relative one is relative to the home). */
export function tarballPath(home: Home, spec: string): string {
  return path.resolve(home.root, spec.slice('file:'.length));
}

/** The first line of /etc/os-release that sets `key`, or '' (apt's packages depend on the release). */
function osRelease(key: string): string {
  try {
    const m = new RegExp(`^${key}=(.*)$`, 'm').exec(fs.readFileSync('/etc/os-release', 'utf8'));
    return m ? m[1]!.replace(/^"|"$/g, '') : '';
  } catch {
    return '';
  }
}

/** The sha256 of a file, or why it cannot be read (a build then fails naming it). */
function fileDigest(file: string): string {
  try {
    return createHash('sha256').update(fs.readFileSync(file)).digest('hex');
  } catch (e) {
    return `unreadable: ${(e as NodeJS.ErrnoException).code ?? 'error'}`;
  }
}

/**
 * The key of an environment's packages: a hash of what decides what a build
 * makes — the lists as written, the bytes of each local tarball, the
 * machine (Node's version and the architecture for npm; the release from
 * /etc/os-release for apt) and BUILD_FORMAT. Not the registry's state: a
 * range (`^1.2`) or an apt package without a version stays as first built
 * until `openboa env build --rebuild` (pin versions to be exact).
 */
export function packagesKey(home: Home, p: EnvironmentPackages): string {
  const inputs = {
    format: BUILD_FORMAT,
    arch: process.arch,
    npm: p.npm.map((s) => (s.startsWith('file:') ? { spec: s, sha256: fileDigest(tarballPath(home, s)) } : s)),
    node: p.npm.length ? process.versions.node : null,
    apt: p.apt,
    release: p.apt.length ? `${osRelease('ID')} ${osRelease('VERSION_ID')}` : null,
  };
  return createHash('sha256').update(JSON.stringify(inputs)).digest('hex').slice(0, 16);
}

export function cacheSpot(home: Home, environmentId: string, hash: string): CacheSpot {
  const envDir = path.join(envCacheRoot(home), environmentId);
  return {
    environmentId,
    hash,
    dir: path.join(envDir, hash),
    builds: path.join(envDir, `${hash}.builds`),
    runs: path.join(envDir, `${hash}.runs`),
    log: path.join(envDir, `${hash}.log`),
    lock: { dir: path.join(envDir, hash), lease: path.join(envDir, `${hash}.lock`), leaseOwner: path.join(envDir, `${hash}.lock.json`) },
    envDir,
  };
}

/** The name of the first build of a key (a rebuild's is random: buildName in package-build.ts). */
export const FIRST_BUILD = '0';

/** A build's folder. */
export const buildDir = (spot: CacheSpot, build: string) => path.join(spot.builds, build);

/** The name of the current build (what `<hash>` links to), or null while none is built. */
export function currentBuild(spot: CacheSpot): string | null {
  let target: string;
  try {
    target = fs.readlinkSync(spot.dir);
  } catch {
    return null;
  }
  const prefix = `${path.basename(spot.builds)}/`;
  const build = target.startsWith(prefix) ? target.slice(prefix.length) : '';
  return BUILD_NAME.test(build) ? build : null;
}

/** What a build may be called (FIRST_BUILD, or buildName's hex). */
export const BUILD_NAME = /^(?:0|[0-9a-f]{12})$/;

/**
 * A build's manifest, or null when it is not there (no folder, no manifest
 * that reads, or one written for another environment or key: a folder
 * copied from elsewhere is not this cache).
 */
export function readManifest(spot: CacheSpot, build: string | null = currentBuild(spot)): PackagesManifest | null {
  if (build === null) return null;
  try {
    const r = PackagesManifest.safeParse(JSON.parse(fs.readFileSync(path.join(buildDir(spot, build), 'manifest.json'), 'utf8')));
    return r.success && r.data.hash === spot.hash && r.data.environment_id === spot.environmentId ? r.data : null;
  } catch {
    return null;
  }
}

/** Debian's multiarch name of this machine (where apt's libraries go), for LD_LIBRARY_PATH. */
const MULTIARCH: Record<string, string> = { x64: 'x86_64-linux-gnu', arm64: 'aarch64-linux-gnu', arm: 'arm-linux-gnueabihf', ia32: 'i386-linux-gnu', ppc64: 'powerpc64le-linux-gnu', s390x: 's390x-linux-gnu', riscv64: 'riscv64-linux-gnu' };

/**
 * What the sandbox's shell gets: the cache's bin folders before the PATH it
 * had, and (with apt packages) their library folders as LD_LIBRARY_PATH,
 * each under `root` (the mount's target under bubblewrap, the cache's host
 * folder otherwise). Decided by the lists alone, not by what a build made,
 * so the shell's environment is known before the cache is built; a folder
 * a build did not make is harmless on either path.
 */
export function packagesEnv(p: EnvironmentPackages, root: string, env: Record<string, string>): Record<string, string> {
  const at = (dirs: string[]) => dirs.map((d) => path.posix.join(root, d));
  const out = { ...env };
  const bin = at([...(p.npm.length ? ['npm/node_modules/.bin'] : []), ...(p.apt.length ? ['apt/usr/local/bin', 'apt/usr/bin', 'apt/bin'] : [])]);
  if (bin.length) out.PATH = [...bin, env.PATH ?? '/usr/local/bin:/usr/bin:/bin'].join(':');
  if (p.apt.length) {
    const arch = MULTIARCH[process.arch];
    const lib = at([...(arch ? [`apt/usr/lib/${arch}`, `apt/lib/${arch}`] : []), 'apt/usr/lib', 'apt/lib']);
    out.LD_LIBRARY_PATH = [...lib, ...(env.LD_LIBRARY_PATH ? [env.LD_LIBRARY_PATH] : [])].join(':');
  }
  return out;
}
