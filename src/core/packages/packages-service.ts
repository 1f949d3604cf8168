/**
 * An environment's packages in a run, as a run service (run/loop-hooks.ts):
 * for an environment that lists any, the cache of its version
 * (package-cache.ts), the build the run pinned as it was set up
 * (package-pins.ts: a rebuild meanwhile leaves it in place), mounted
 * read-only at /opt/openboa/packages with its bin folders on the shell's
 * PATH; built when the run opens if it is not built yet (package-build.ts),
 * before any tool may run. The pin goes when the run closes. A build that fails is a
 * session.error naming the packages and the kept log, and the bound
 * packagesReady() then ends the run idle before its first model request:
 * the session waits for a person (a message tries again), it does not spin.
 * Other runs get nothing.
 */
import { rel } from '../definitions/definitions.js';
import type { Bound, RunService } from '../run/loop-hooks.js';
import { runSlot } from '../run/run-state.js';
import { ensurePackages } from './package-build.js';
import { buildDir, cacheSpot, hasPackages, packagesEnv, packagesKey, PACKAGES_TARGET, readManifest, type CacheSpot } from './package-cache.js';
import { pinBuild, unpinBuild } from './package-pins.js';

/** Why this run's packages are not there (the build failed), or null. */
const packagesFailure = runSlot('packages', () => ({ message: null as string | null }));

export function packagesService(): RunService {
  let spot: CacheSpot | null = null;
  /** The build this run mounts (pinned for its session), or why it could not pin one. */
  let pin: { build: string; sessionId: string } | { error: string } | null = null;
  let built: boolean | null = null;
  return {
    name: 'packages',
    provide({ rt, environment, env, sessionId }) {
      const p = environment.def.packages;
      if (!hasPackages(p)) return {};
      const at = cacheSpot(rt.home, environment.id, packagesKey(rt.home, p));
      spot = at;
      try {
        pin = { build: pinBuild(at, sessionId), sessionId };
      } catch (e) {
        pin = { error: (e as Error).message };
      }
      // A mount of a build folder, never of the `<hash>` link: a shell started later in the run gets the same build.
      const dir = 'build' in pin ? buildDir(at, pin.build) : at.dir;
      // Under bubblewrap the shell sees the mount; on the host (unshare-net, unconfined) the folder itself.
      const root = env.posture?.isolation === 'bwrap' ? PACKAGES_TARGET : dir;
      return { sandboxSpec: (spec) => ({ ...spec, mounts: [...spec.mounts, { host: dir, target: PACKAGES_TARGET, writable: false }], env: packagesEnv(p, root, spec.env) }) };
    },
    async open(ctx, journal) {
      if (!spot || !pin) return;
      const { home, deps } = ctx.rt;
      let failure: string;
      try {
        if ('error' in pin) throw new Error(pin.error);
        const r = await ensurePackages({ home, environmentId: ctx.environment.id, packages: ctx.environment.def.packages, spot, env: deps.env, clock: deps.clock, signal: ctx.control.signal });
        // The pinned build is there: the current one, or one a rebuild since left in place for this run.
        if (r.ok && readManifest(spot, pin.build)) {
          built = r.built && r.build === pin.build;
          return;
        }
        failure = r.ok ? `its build ${pin.build} is not there` : r.message;
      } catch (e) {
        failure = (e as Error).message;
      }
      // Cut short (an interrupt, the deadline, shutdown): the run ends for that reason, not this one.
      if (ctx.control.signal.aborted) return;
      ctx.state.get(packagesFailure).message = failure;
      journal.error({ code: 'packages_failed', message: `environment ${ctx.environment.id}: installing its packages failed: ${failure} (the install's log: ${rel(home, spot.log)}; \`openboa env build ${ctx.environment.id}\` tries again and prints it)`, retry: 'exhausted' });
    },
    startFiles(ctx) {
      if (!spot) return;
      const p = ctx.environment.def.packages;
      const build = pin && 'build' in pin ? pin.build : null;
      ctx.files.json('packages.json', { npm: p.npm, apt: p.apt, mounted_at: PACKAGES_TARGET, cache: rel(ctx.rt.home, build === null ? spot.dir : buildDir(spot, build)), hash: spot.hash, build, built_now: built, ready: built !== null, log: rel(ctx.rt.home, spot.log) });
    },
    close() {
      if (spot && pin && 'build' in pin) unpinBuild(spot, pin.sessionId, pin.build);
    },
  };
}

/**
 * Ends the run idle, before its first model request, when its packages
 * could not be built (the error is recorded already). A terminal error: a
 * revisit the run took in is retried with backoff (default-hooks.ts).
 */
export function packagesReady(): Bound {
  return {
    check(ctx) {
      return ctx.state.get(packagesFailure).message === null ? null : { kind: 'idle', stop: { type: 'retries_exhausted' }, terminalError: true };
    },
  };
}
