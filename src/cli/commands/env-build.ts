import { loadEnvironment, rel } from '../../core/definitions/definitions.js';
import { ensurePackages } from '../../core/packages/package-build.js';
import { hasPackages } from '../../core/packages/package-cache.js';
import type { CliContext, CommandInput } from '../command.js';

export async function run(ctx: CliContext, { args, flags }: CommandInput): Promise<number | void> {
  const environment = loadEnvironment(ctx.home, args.name!);
  const { packages } = environment.def;
  if (!hasPackages(packages)) return ctx.out.result({ environment_id: environment.id, packages, built: false, cache: null }, `environment ${environment.id} lists no packages: nothing to build`);
  const r = await ensurePackages({
    home: ctx.home,
    environmentId: environment.id,
    packages,
    env: ctx.deps.env,
    clock: ctx.deps.clock,
    signal: ctx.signal,
    rebuild: flags.rebuild === true,
    sweep: true,
    onWait: (holder) => ctx.out.note(`waiting: ${holder}`),
  });
  const log = rel(ctx.home, r.spot.log);
  if (!r.ok) {
    ctx.out.error('packages_failed', `environment ${environment.id}: installing its packages failed: ${r.message} (the install's log: ${log})`);
    return 1;
  }
  const cache = rel(ctx.home, r.spot.dir);
  const removed = r.removed.length ? `; removed ${r.removed.length} old build${r.removed.length === 1 ? '' : 's'} no run has` : '';
  ctx.out.result(
    { environment_id: environment.id, packages, hash: r.spot.hash, build: r.build, built: r.built, cache, log, built_at: r.manifest.built_at, removed_builds: r.removed },
    r.built ? `built ${cache} (build ${r.build}; log: ${log})${removed}` : `already built: ${cache} (build ${r.build}, at ${r.manifest.built_at}; --rebuild builds it again)${removed}`,
  );
}
