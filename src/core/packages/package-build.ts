/**
 * Building an environment's packages into its cache (package-cache.ts):
 * once per key, by one builder at a time, into a temp folder renamed into
 * `<hash>.builds/`, then made current. Called by `openboa env build` and by
 * a run whose cache is missing (packages-service.ts).
 *
 * - The builder holds `<hash>.lock` (foundation/lease.ts) for the whole
 *   build; another builder of the same key waits for it, then finds the
 *   cache built and does nothing. A builder that died leaves a lock the
 *   next one breaks (at once on this machine, else after 10 s).
 * - Under the lock, temp folders of that key are leftovers of a dead
 *   builder and are removed.
 * - A rebuild makes a new build beside the current one and switches
 *   `<hash>` to it in one rename; a sandbox that has the old one keeps it.
 *   Then, and at every `openboa env build`, builds that no live run has
 *   pinned are removed (package-pins.ts).
 * - A failure removes the temp folder and keeps the log (`<hash>.log`),
 *   whose last lines the returned message quotes.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Clock } from '../foundation/clock.js';
import { iso } from '../foundation/clock.js';
import type { Home } from '../foundation/home.js';
import { acquireLease, type Lease } from '../foundation/lease.js';
import { OpenboaError } from '../foundation/errors.js';
import { writeJsonAtomic, fsyncDir } from '../store/atomic-file.js';
import type { EnvironmentPackages, PackagesManifest } from '../schema/index.js';
import { buildDir, cacheSpot, currentBuild, FIRST_BUILD, packagesKey, readManifest, tarballPath, type CacheSpot } from './package-cache.js';
import { sweepBuilds, switchCurrent } from './package-pins.js';
import { aptDownloadArgs, aptSimulateArgs, aptToFetch, dpkgExtractArgs, installEnv, npmInstallArgs, runStep, stripSetId, type StepResult } from './package-install.js';

export interface BuildInput {
  home: Home;
  environmentId: string;
  packages: EnvironmentPackages;
  /** Where its cache goes, when the caller has it already (cacheSpot of packagesKey: a run mounts it before it is built). */
  spot?: CacheSpot;
  /** The daemon's environment (installEnv takes what installing needs). */
  env: NodeJS.ProcessEnv;
  clock: Clock;
  signal: AbortSignal;
  /** Build again even when built: a new build becomes current; the old one stays while a run has it. */
  rebuild?: boolean;
  /** Also when built, take the lock and remove the builds no live run has (`openboa env build`). */
  sweep?: boolean;
  /** Told once when another builder holds the lock and this one waits. */
  onWait?: (holder: string) => void;
}

export type BuildResult =
  | { ok: true; spot: CacheSpot; manifest: PackagesManifest; built: boolean; /** The current build's name, and the old builds this call removed. */ build: string; removed: string[] }
  | { ok: false; spot: CacheSpot; message: string };

/** How often a waiting builder tries the lock again (the lease says sooner when it can tell). */
const WAIT_MS = 500;

/** The environment's packages built: the cache there is, or one built now (waiting for another builder of it). */
export async function ensurePackages(i: BuildInput): Promise<BuildResult> {
  const spot = i.spot ?? cacheSpot(i.home, i.environmentId, packagesKey(i.home, i.packages));
  const ready = i.rebuild || i.sweep ? null : built(spot);
  if (ready) return ready;
  fs.mkdirSync(spot.envDir, { recursive: true });
  const lease = await lockWait(spot, i);
  try {
    // Another builder may have built it while this one waited.
    const now = i.rebuild ? null : built(spot);
    if (now) return { ...now, removed: sweepBuilds(i.home, spot) };
    for (const e of fs.readdirSync(spot.envDir)) if (e.startsWith(`.tmp-${spot.hash}-`)) fs.rmSync(path.join(spot.envDir, e), { recursive: true, force: true });
    return await build(spot, i, AbortSignal.any([i.signal, lease.signal]));
  } finally {
    await lease.release();
  }
}

/** The current build when there is one whole. */
function built(spot: CacheSpot): Extract<BuildResult, { ok: true }> | null {
  const build = currentBuild(spot);
  const manifest = build === null ? null : readManifest(spot, build);
  return build !== null && manifest ? { ok: true, spot, manifest, built: false, build, removed: [] } : null;
}

/**
 * The name of a new build: FIRST_BUILD for the first (what runs that found
 * none pinned, package-pins.ts), else a fresh one, so a rebuild never
 * writes where a running sandbox has its build.
 */
function buildName(spot: CacheSpot): string {
  return currentBuild(spot) === null ? FIRST_BUILD : randomBytes(6).toString('hex');
}

async function lockWait(spot: CacheSpot, i: BuildInput): Promise<Lease> {
  let told = false;
  for (;;) {
    try {
      return await acquireLease(spot.lock, { purpose: `packages of ${i.environmentId}`, nowIso: iso(i.clock.now()), what: `the package cache ${i.environmentId}/${spot.hash}` });
    } catch (e) {
      if (!OpenboaError.is(e) || e.code !== 'busy') throw e;
      if (!told) i.onWait?.(e.message);
      told = true;
      await i.clock.sleep(e.retryAfterMs ?? WAIT_MS, i.signal);
    }
  }
}

/** The log's last error lines (npm's `npm error`, apt's `E:`), else its last lines, for the error's message. */
function tail(file: string, lines = 3): string {
  try {
    const all = fs.readFileSync(file, 'utf8').split('\n').map((l) => l.trim());
    const said = all.filter((l) => l && !l.startsWith('$ ') && !l.startsWith('[exit') && !/^npm error (A complete log|\s*$)/.test(l));
    const errors = said.filter((l) => /^(?:E:|npm error|npm ERR!|dpkg(?:-deb)?: error)/.test(l));
    return (errors.length ? errors : said).slice(-lines).join(' | ').slice(0, 600);
  } catch {
    return '';
  }
}

async function build(spot: CacheSpot, i: BuildInput, signal: AbortSignal): Promise<BuildResult> {
  const tmp = fs.mkdtempSync(path.join(spot.envDir, `.tmp-${spot.hash}-`));
  const log = fs.openSync(spot.log, 'w');
  const env = installEnv(i.env);
  const fail = (what: string, r?: StepResult): BuildResult => {
    const said = r ? (r.problem ?? tail(spot.log)) : '';
    return { ok: false, spot, message: `${what}${said ? `: ${said}` : ''}` };
  };
  try {
    fs.writeSync(log, `openboa env build ${i.environmentId} ${spot.hash} at ${iso(i.clock.now())}\nnpm: ${JSON.stringify(i.packages.npm)}\napt: ${JSON.stringify(i.packages.apt)}\n`);
    if (i.packages.npm.length) {
      const missing = i.packages.npm.filter((s) => s.startsWith('file:') && !fs.statSync(tarballPath(i.home, s), { throwIfNoEntry: false })?.isFile());
      if (missing.length) {
        fs.writeSync(log, `no such tarball: ${missing.join(', ')}\n`);
        return fail(`npm package ${missing.join(', ')}: no such file ${missing.map((s) => tarballPath(i.home, s)).join(', ')}`);
      }
      const specs = i.packages.npm.map((s) => (s.startsWith('file:') ? tarballPath(i.home, s) : s));
      const prefix = path.join(tmp, 'npm');
      fs.mkdirSync(prefix);
      const r = await runStep(npmInstallArgs(prefix, specs), { cwd: tmp, env, log, signal });
      if (r.code !== 0) return fail(`npm could not install ${i.packages.npm.join(', ')}`, r);
    }
    if (i.packages.apt.length) {
      const failed = await unpackApt(tmp, i.packages.apt, { env, log, signal });
      if (failed) return failed(spot);
    }
    const stripped = stripSetId(tmp);
    if (stripped.length) fs.writeSync(log, `cleared the setuid/setgid bits of ${stripped.join(', ')}\n`);
    const manifest: PackagesManifest = { format: 1, environment_id: i.environmentId, hash: spot.hash, npm: i.packages.npm, apt: i.packages.apt, built_at: iso(i.clock.now()) };
    writeJsonAtomic(path.join(tmp, 'manifest.json'), manifest);
    const name = buildName(spot);
    // A first build's folder with no current build to name it is a builder's that died before the switch: no run has it yet.
    if (name === FIRST_BUILD) fs.rmSync(buildDir(spot, name), { recursive: true, force: true });
    fs.mkdirSync(spot.builds, { recursive: true });
    fs.renameSync(tmp, buildDir(spot, name));
    fsyncDir(spot.builds);
    switchCurrent(spot, name);
    const removed = sweepBuilds(i.home, spot);
    fs.writeSync(log, `built ${buildDir(spot, name)}${removed.length ? `; removed the old builds no run has: ${removed.join(', ')}` : ''}\n`);
    return { ok: true, spot, manifest, built: true, build: name, removed };
  } finally {
    fs.closeSync(log);
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

/** apt's packages and the dependencies the host lacks, downloaded and unpacked under tmp/apt; a failure's result, or null. */
async function unpackApt(tmp: string, pkgs: readonly string[], o: { env: Record<string, string>; log: number; signal: AbortSignal }): Promise<((spot: CacheSpot) => BuildResult) | null> {
  const failed = (what: string, r: StepResult) => (spot: CacheSpot): BuildResult => ({ ok: false, spot, message: `${what}: ${r.problem ?? tail(spot.log)}` });
  const sim = await runStep(aptSimulateArgs(pkgs), { cwd: tmp, env: o.env, log: o.log, signal: o.signal, keepStdout: true });
  if (sim.code !== 0) return failed(`apt cannot install ${pkgs.join(', ')}`, sim);
  const fetch = aptToFetch(sim.stdout);
  const root = path.join(tmp, 'apt');
  fs.mkdirSync(root);
  if (fetch.length === 0) return null; // the host has them all: its /usr is the sandbox's
  const debs = path.join(tmp, 'debs');
  fs.mkdirSync(debs);
  const dl = await runStep(aptDownloadArgs(fetch), { cwd: debs, env: o.env, log: o.log, signal: o.signal });
  if (dl.code !== 0) return failed(`apt could not download ${fetch.join(', ')} (for ${pkgs.join(', ')})`, dl);
  for (const deb of fs.readdirSync(debs).filter((f) => f.endsWith('.deb')).sort()) {
    const x = await runStep(dpkgExtractArgs(path.join(debs, deb), root), { cwd: tmp, env: o.env, log: o.log, signal: o.signal });
    if (x.code !== 0) return failed(`dpkg could not unpack ${deb}`, x);
  }
  fs.rmSync(debs, { recursive: true, force: true });
  return null;
}
