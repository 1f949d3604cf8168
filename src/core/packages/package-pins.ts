/**
 * Which build of a package cache each running session has (package-cache.ts
 * has the layout), so that a rebuild never pulls a build from under a
 * sandbox that has it mounted: the build a run mounts is the one it pinned,
 * and only builds that are neither current nor pinned by a live run are
 * removed.
 *
 * - A run pins as it is set up (pinBuild): it writes
 *   `<hash>.runs/<session>` naming the current build (or FIRST_BUILD while
 *   none is built: the run builds it before any tool runs), then reads the
 *   current build again; if it changed in between, it pins again. So a pin
 *   that a sweep did not see was written after the sweep's switch, and
 *   the run that wrote it sees the new build and takes that one.
 * - A rebuild switches `<hash>` to its new build first, then sweeps
 *   (sweepBuilds, under the cache's build lock): a pin counts while its
 *   session's lease lock exists (a run holds it from before it pins until
 *   after it unpins; a run that died leaves it until the session's next run
 *   takes the lease and replaces the pin). Nothing else removes a build.
 * - A run unpins when it closes (unpinBuild), after its sandbox is closed.
 *
 * Only the daemon's user writes here; the agent's sandbox sees one build,
 * read-only, and none of this folder.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Home } from '../foundation/home.js';
import { UUID_V7 } from '../schema/index.js';
import { fsyncDir } from '../store/atomic-file.js';
import { BUILD_NAME, currentBuild, FIRST_BUILD, type CacheSpot } from './package-cache.js';

/** Pins in a row that may find the current build changed under them before a run gives up (each change is a whole rebuild). */
const PIN_TRIES = 8;

/** `link` made (or replaced) as a symlink to `target`, in one rename. */
function linkAtomic(target: string, link: string): void {
  const tmp = path.join(path.dirname(link), `.tmp-${path.basename(link)}-${randomBytes(6).toString('hex')}`);
  fs.symlinkSync(target, tmp);
  try {
    fs.renameSync(tmp, link);
  } catch (e) {
    fs.rmSync(tmp, { force: true });
    throw e;
  }
}

/** The build a pin names, or null. */
function pinned(pin: string): string | null {
  try {
    const b = path.basename(fs.readlinkSync(pin));
    return BUILD_NAME.test(b) ? b : null;
  } catch {
    return null;
  }
}

/** Makes `build` the current one (`<hash>` → `<hash>.builds/<build>`), in one rename. */
export function switchCurrent(spot: CacheSpot, build: string): void {
  linkAtomic(`${path.basename(spot.builds)}/${build}`, spot.dir);
  fsyncDir(spot.envDir);
}

/** Pins the current build (FIRST_BUILD while none is) for `sessionId`, whose lease the caller holds; returns its name. */
export function pinBuild(spot: CacheSpot, sessionId: string): string {
  if (!UUID_V7.test(sessionId)) throw new Error(`not a session id: ${JSON.stringify(sessionId)}`);
  fs.mkdirSync(spot.runs, { recursive: true });
  const pin = path.join(spot.runs, sessionId);
  for (let i = 0; i < PIN_TRIES; i++) {
    const build = currentBuild(spot) ?? FIRST_BUILD;
    try {
      linkAtomic(`../${path.basename(spot.builds)}/${build}`, pin);
    } catch (e) {
      // A sweep may take the temp link of a pin being made (it is no session's): try again.
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') continue;
      throw e;
    }
    if ((currentBuild(spot) ?? FIRST_BUILD) === build) return build;
  }
  throw new Error(`the package cache ${spot.environmentId}/${spot.hash} was rebuilt ${PIN_TRIES} times while a run took it`);
}

/** Removes `sessionId`'s pin if it still names `build` (never throws: a pin left behind only keeps a build a while longer). */
export function unpinBuild(spot: CacheSpot, sessionId: string, build: string): void {
  const pin = path.join(spot.runs, sessionId);
  try {
    if (pinned(pin) === build) fs.rmSync(pin, { force: true });
  } catch {
    // kept: the next sweep finds its session's lease gone and removes it
  }
}

/**
 * Removes every build that is neither current nor pinned by a live run, and
 * pins of runs that are gone; the caller holds the cache's build lock and
 * has switched to the current build already. Returns the builds removed.
 * With no current build (none was ever built whole) it removes nothing.
 */
export function sweepBuilds(home: Home, spot: CacheSpot): string[] {
  const current = currentBuild(spot);
  if (current === null) return [];
  const keep = new Set([current]);
  for (const name of entries(spot.runs)) {
    const pin = path.join(spot.runs, name);
    const live = UUID_V7.test(name) && fs.existsSync(home.session(name).lease);
    const build = live ? pinned(pin) : null;
    if (build) keep.add(build);
    else if (!live) fs.rmSync(pin, { force: true });
  }
  const removed: string[] = [];
  for (const name of entries(spot.builds)) {
    if (keep.has(name)) continue;
    fs.rmSync(path.join(spot.builds, name), { recursive: true, force: true });
    removed.push(name);
  }
  return removed;
}

function entries(dir: string): string[] {
  try {
    return fs.readdirSync(dir);
  } catch {
    return [];
  }
}
