import { Daemon } from '../../daemon/daemon.js';
import { probeCapabilities } from '../../core/sandbox/isolation.js';
import { UsageError, type CliContext, type CommandInput, type Flags } from '../command.js';
import { choiceFlag, wholeNumberFlag } from '../flags.js';
import { lockHome } from '../../daemon/home-lock.js';
import { startDaemonBeat } from '../../daemon/daemon-beat.js';
import { parseShard, type Shard } from '../../daemon/shard.js';
import { SessionStore } from '../../core/store/session-store.js';
import { DEFAULT_FSYNC, FSYNC_POLICIES } from '../../core/store/durability.js';
import { setupTelemetry, type TelemetrySetup } from '../../daemon/telemetry-setup.js';
import { VERSION } from '../version.js';

/** Runs the daemon in the foreground until SIGINT/SIGTERM; shared by `daemon` and `start`. */
/**
 * Refuses a folder that is not a home (exit 3) unless --init, which makes it
 * one first: a mistyped --home must not silently become an empty home that a
 * daemon then watches.
 */
export async function ensureHome(ctx: CliContext, flags: Flags): Promise<void> {
  const { notAHome } = await import('../../core/foundation/home.js');
  const missing = notAHome(ctx.home);
  if (!missing) return;
  if (flags.init !== true) throw (await import('../../core/foundation/errors.js')).notFound(`${missing}: not an openboa home (openboa init ${ctx.home.root} makes one; or pass --init)`);
  const { initHome } = await import('./init.js');
  const made = initHome(ctx.home.root);
  ctx.out.note(`made ${ctx.home.root} a home: ${made.created.join(', ')}`);
}

export async function runDaemon(ctx: CliContext, flags: Flags): Promise<number> {
  await ensureHome(ctx, flags);
  const concurrency = wholeNumberFlag(flags, 'concurrency', { min: 1, max: 256, example: 4 }) ?? 4;
  const sweep = wholeNumberFlag(flags, 'sweep', { min: 1, max: 86_400, example: 30 }) ?? 30;
  const pollInterval = wholeNumberFlag(flags, 'poll-interval', { min: 1, max: 86_400, example: 2 });
  const fsync = choiceFlag(flags, 'fsync', FSYNC_POLICIES) ?? DEFAULT_FSYNC;
  const write = (line: string) => ctx.out.write(line);
  // One daemon per home, unless asked for several (hosts sharing one home); a dead daemon's lock is taken over.
  const homeLock = flags['allow-multiple'] === true ? null : await lockHome(ctx.home, ctx.deps.clock);
  // Lock or not, a heartbeat says this daemon runs, to readers on any host (core/foundation/daemon-presence.ts).
  const stopBeat = startDaemonBeat(ctx.home, () => new Date().toISOString());
  try {
    // The runs' store syncs by the chosen policy (docs/format.md, Durability).
    const store = fsync === DEFAULT_FSYNC ? ctx.store : new SessionStore(ctx.home, ctx.deps, { fsync });
    return await serve({ ...ctx, store }, flags, { concurrency, sweep, pollInterval }, write);
  } finally {
    stopBeat();
    await homeLock?.release();
  }
}

/** The daemon's numeric options, checked (seconds where the flags take seconds). */
interface Sizes {
  concurrency: number;
  sweep: number;
  pollInterval: number | undefined;
}

async function serve(ctx: CliContext, flags: Flags, sizes: Sizes, write: (line: string) => void): Promise<number> {
  const listen = typeof flags['metrics-listen'] === 'string' ? flags['metrics-listen'] : undefined;
  let daemon: Daemon | null = null;
  const tel = await setupTelemetry({ env: ctx.deps.env, store: ctx.store, clock: ctx.deps.clock, version: VERSION, ...(listen !== undefined ? { metricsListen: listen } : {}), metricsForApi: typeof flags.listen === 'string', poll: flags.poll === true, watchMode: () => daemon?.watchMode ?? 'native' });
  try {
    return await serveWith({ ...ctx, deps: tel.telemetry ? { ...ctx.deps, telemetry: tel.telemetry } : ctx.deps }, flags, sizes, write, tel, (d) => (daemon = d));
  } finally {
    await tel.close();
  }
}

async function serveWith(ctx: CliContext, flags: Flags, sizes: Sizes, write: (line: string) => void, tel: TelemetrySetup, made: (d: Daemon) => void): Promise<number> {
  const { concurrency, sweep, pollInterval } = sizes;
  const d = new Daemon(
    { home: ctx.home, store: ctx.store, deps: ctx.deps },
    { concurrency, poll: flags.poll === true, ...(pollInterval ? { pollIntervalMs: pollInterval * 1000 } : {}), shard: shardFlag(flags), sweepMs: sweep * 1000, json: ctx.json, write, ...(ctx.out.terminalColumns ? { columns: ctx.out.terminalColumns } : {}) },
  );
  made(d);
  const caps = probeCapabilities();
  const { sessions } = await d.start();
  // The HTTP API in this process (docs/http.md): what it appends is looked at by this daemon at once.
  const api = typeof flags.listen === 'string' ? await listenFor(ctx, d, flags.listen, write, tel) : null;
  const banner = {
    home: ctx.home.root,
    sessions,
    watch: d.watchMode,
    concurrency,
    sandbox: caps.bwrap ? 'bubblewrap' : caps.unshare ? 'unshare (network only)' : 'none available',
    pid: process.pid,
    ...(tel.listener ? { metrics: `http://${tel.listener.host.includes(':') ? `[${tel.listener.host}]` : tel.listener.host}:${tel.listener.port}/metrics` } : {}),
    ...(tel.tracesTo ? { traces: tel.tracesTo } : {}),
  };
  write(ctx.json ? JSON.stringify({ at: new Date().toISOString(), kind: 'daemon_started', ...banner }) : `openboa daemon: ${sessions} session(s) in ${ctx.home.sessionsDir}, watching (${d.watchMode}), concurrency ${concurrency}, sandbox ${banner.sandbox}, pid ${process.pid}${banner.metrics ? `, metrics at ${banner.metrics}` : ''}${banner.traces ? ', traces exported over OTLP' : ''}`);
  await new Promise<void>((resolve) => {
    if (ctx.signal.aborted) return resolve();
    ctx.signal.addEventListener('abort', () => resolve(), { once: true });
  });
  write(ctx.json ? JSON.stringify({ at: new Date().toISOString(), kind: 'daemon_stopping', active_runs: d.activeRuns }) : `openboa daemon: stopping (${d.activeRuns} run(s) in flight are cut short and rescheduled)`);
  await api?.close();
  await d.stop();
  write(ctx.json ? JSON.stringify({ at: new Date().toISOString(), kind: 'daemon_stopped' }) : 'openboa daemon: stopped');
  return 0;
}

/** The API beside the daemon (`--listen`); a refused address stops the daemon and is a usage error. */
async function listenFor(ctx: CliContext, d: Daemon, listen: string, write: (line: string) => void, tel: TelemetrySetup) {
  const { openApiListener, ListenRefused } = await import('../../http/api-listener.js');
  try {
    return await openApiListener(ctx, listen, { write, onAppend: (id) => d.evaluate(id), runsHere: true, ...(tel.metrics ? { metrics: tel.metrics } : {}) });
  } catch (e) {
    await d.stop();
    throw e instanceof ListenRefused ? new UsageError(e.message) : e;
  }
}

/** `--shard I/N`, checked (a usage error names it), or null. */
function shardFlag(flags: Flags): Shard | null {
  if (typeof flags.shard !== 'string') return null;
  try {
    return parseShard(flags.shard);
  } catch (e) {
    throw new UsageError(`--shard: ${(e as Error).message}`);
  }
}

/** `openboa daemon`. */
export const run = (ctx: CliContext, { flags }: CommandInput): Promise<number> => runDaemon(ctx, flags);
