/**
 * `npm run bench -- scale-out` (on request): several hosts on one home over
 * sshfs (tests/helpers/sshfs-home.ts: an sshd on 127.0.0.1, one mount per
 * host, each daemon in its own namespaces), on the scripted model.
 *
 * - poll: one daemon `--poll` on SESSIONS idle sessions, for each mount
 *   setting in SCALE_MOUNTS: its CPU while idle (share of one core; the
 *   sshfs client and the sshd apart) and the latency from a message
 *   delivered on another host, as `openboa send` does, to the daemon's
 *   run_start, p50 and p90;
 * - scale: MESSAGES messages over RUN_SESSIONS sessions dropped at once
 *   (through inbox/, ringing the doorbell), run by one daemon, then by
 *   three (`--shard i/3`, concurrency 4 each): runs per second and the
 *   ratio. On a 2-core machine three daemons share the same two cores,
 *   so the ratio says what sharing costs there, not what three hosts give.
 *
 * Sizes: SCALE_SESSIONS (default 1000), SCALE_MESSAGES (500), SCALE_RUN_SESSIONS (50);
 * SCALE_IDLE_S (20) and SCALE_PINGS (15); SCALE_PARTS (poll,scale);
 * SCALE_MOUNTS (sshfs options: "dcache_timeout=1;cache=no").
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { benchHome, manySessions } from './fixtures.js';
import { percentile, round } from './stats.js';
import { missing, onHost, signalOnHost, sshfsHome } from '../tests/helpers/sshfs-home.js';
import { dropInInbox } from '../src/core/store/inbox-drop.js';
import { ring } from '../src/core/store/ring.js';
import { SessionStore } from '../src/core/store/session-store.js';
import { Home } from '../src/core/foundation/home.js';
import { systemDeps } from '../src/core/foundation/deps.js';

const CLI = path.resolve(import.meta.dirname, '..', 'dist', 'cli', 'main.js');
const SESSIONS = Number(process.env.SCALE_SESSIONS ?? 1000);
const MESSAGES = Number(process.env.SCALE_MESSAGES ?? 500);
const RUN_SESSIONS = Number(process.env.SCALE_RUN_SESSIONS ?? 50);
const TICK_MS = 10; // clock ticks of /proc/<pid>/stat (USER_HZ 100)
/** Which parts run: poll, scale (SCALE_PARTS=poll,scale). */
const PARTS = new Set((process.env.SCALE_PARTS ?? 'poll,scale').split(','));
/** The mounts the poll part measures, each its sshfs options joined by ",", separated by ";". */
const MOUNTS = (process.env.SCALE_MOUNTS ?? 'dcache_timeout=1;cache=no').split(';').map((m) => m.split(','));
const IDLE_S = Number(process.env.SCALE_IDLE_S ?? 20);
const PINGS = Number(process.env.SCALE_PINGS ?? 15);

interface Daemon {
  proc: ChildProcess;
  lines: Array<{ at: number; rec: Record<string, unknown> }>;
}

function startOn(host: string, home: string, args: string[]): Daemon {
  const argv = onHost(host, [process.execPath, CLI, '--home', home, 'daemon', '--json', '--allow-multiple', '--poll', ...args]);
  const proc = spawn(argv[0]!, argv.slice(1), { stdio: ['ignore', 'pipe', 'ignore'] });
  const d: Daemon = { proc, lines: [] };
  let buf = '';
  proc.stdout!.on('data', (x) => {
    buf += x;
    let i;
    while ((i = buf.indexOf('\n')) !== -1) {
      try {
        d.lines.push({ at: Date.now(), rec: JSON.parse(buf.slice(0, i)) });
      } catch {
        // not JSON
      }
      buf = buf.slice(i + 1);
    }
  });
  return d;
}

async function until(pred: () => boolean, ms: number, what: string) {
  const end = Date.now() + ms;
  while (!pred()) {
    if (Date.now() > end) throw new Error(`${what}: not within ${ms} ms`);
    await sleep(20);
  }
}

/** CPU ticks (user + system) of a process, 0 when it is gone. */
function ticks(pid: number): number {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(f[11]) + Number(f[12]);
  } catch {
    return 0;
  }
}

function childrenOf(pid: number): number[] {
  try {
    return fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** The daemon: the child of unshare. */
const daemonPid = (d: Daemon) => childrenOf(d.proc.pid!)[0]!;

/** The sshfs client process of a mount (it runs in the background: found by its command line). */
function sshfsPid(mount: string): number {
  for (const n of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(n)) continue;
    try {
      const cmd = fs.readFileSync(`/proc/${n}/cmdline`, 'utf8').split('\0');
      if (cmd[0]?.endsWith('sshfs') && cmd.includes(mount)) return Number(n);
    } catch {
      // gone meanwhile
    }
  }
  throw new Error(`no sshfs process for ${mount}`);
}

/** CPU ticks of the sshd serving the mounts and of all its descendants (one per connection). */
function sshdTicks(pid: number): number {
  return ticks(pid) + childrenOf(pid).reduce((n, k) => n + sshdTicks(k), 0);
}

async function stop(ds: Daemon[]) {
  for (const d of ds) signalOnHost(d.proc.pid!, 'SIGTERM');
  await Promise.all(ds.map((d) => (d.proc.exitCode === null ? new Promise((r) => d.proc.once('exit', r)) : null)));
}

const message = (text: string) => JSON.stringify({ type: 'user.message', content: text });

/**
 * One `--poll` daemon on host a, SESSIONS idle sessions, the home mounted
 * with `mountOptions`. Idle CPU over IDLE_S seconds: the daemon's, and apart
 * from it the sshfs client of its mount and the sshd serving it (the file
 * server's side; on a real network both are elsewhere or in the kernel).
 * Latency: a message delivered from host b as `openboa send` does
 * (SessionStore.deliverUserEvent on a shared home, from the call) to the
 * daemon's run_start line.
 */
async function pollCost(mountOptions: string[]) {
  const b = benchHome();
  const nfs = await sshfsHome(['a', 'b'], mountOptions);
  try {
    // Made on the local disk, then put on the file server's.
    const ids = manySessions(b, SESSIONS);
    fs.cpSync(b.root, nfs.export, { recursive: true });
    const t0 = Date.now();
    const d = startOn('host-a', nfs.mounts.a!, []);
    await until(() => d.lines.some((l) => l.rec.kind === 'daemon_started'), 600_000, 'daemon start');
    const startS = (Date.now() - t0) / 1000;
    // Settle: the search index's catch-up over every log, then the start's sweep and first rounds.
    await until(() => d.lines.some((l) => l.rec.event === 'search_index_caught_up'), 600_000, 'the search index');
    await sleep(10_000);
    const pid = daemonPid(d);
    const client = sshfsPid(nfs.mounts.a!);
    const before = { daemon: ticks(pid), sshfs: ticks(client), sshd: sshdTicks(nfs.sshdPid) };
    // The daemon's share in each tenth of the window: a round of stats shows as a step.
    const series: number[] = [];
    for (let k = 0, last = before.daemon; k < 10; k++) {
      await sleep(IDLE_S * 100);
      const now = ticks(pid);
      series.push(round(((now - last) * TICK_MS) / (IDLE_S * 100), 3));
      last = now;
    }
    const share = (t: number) => round((t * TICK_MS) / (IDLE_S * 1000), 4);
    const idle = { daemon: share(ticks(pid) - before.daemon), sshfs_client: share(ticks(client) - before.sshfs), sshd: share(sshdTicks(nfs.sshdPid) - before.sshd), daemon_by_tenth: series };
    const sender = new SessionStore(new Home(nfs.mounts.b!), systemDeps(), { shared: true });
    const lat: number[] = [];
    const fromReturn: number[] = [];
    const deliver: number[] = [];
    for (let i = 0; i < PINGS; i++) {
      const id = ids[(i * 37) % ids.length]!;
      const at = Date.now();
      sender.deliverUserEvent(id, { type: 'user.message', content: [{ type: 'text', text: `ping ${i}` }] });
      const done = Date.now();
      await until(() => d.lines.some((l) => l.rec.kind === 'run_start' && l.rec.session_id === id && l.at >= at), 60_000, 'a run');
      const started = d.lines.find((l) => l.rec.kind === 'run_start' && l.rec.session_id === id && l.at >= at)!.at;
      lat.push(started - at);
      fromReturn.push(started - done);
      deliver.push(done - at);
      await sleep(500 + Math.random() * 1500);
    }
    await stop([d]);
    return {
      mount: mountOptions.join(','),
      sessions: SESSIONS,
      daemon_start_s: round(startS, 1),
      idle_cpu_share_of_core: idle,
      goal_idle_cpu: '< 0.05 (daemon)',
      // From the delivery's call (its temp file, sync, rename, ring) and from its return, to the run_start line.
      send_to_running_ms: { p50: round(percentile(lat, 50)), p90: round(percentile(lat, 90)), max: round(Math.max(...lat)) },
      delivered_to_running_ms: { p50: round(percentile(fromReturn, 50)), p90: round(percentile(fromReturn, 90)) },
      delivery_call_ms: { p50: round(percentile(deliver, 50)) },
      goal_p50_ms: '< 300',
      load_average: os.loadavg().map((x) => round(x, 1)),
    };
  } finally {
    await nfs.close();
    b.cleanup();
  }
}

async function throughput(hosts: string[]) {
  const b = benchHome();
  const nfs = await sshfsHome(hosts, ['dcache_timeout=1']);
  try {
    // Made on the local disk, then put on the file server's.
    const ids = manySessions(b, RUN_SESSIONS);
    fs.cpSync(b.root, nfs.export, { recursive: true });
    const ds = hosts.map((h, i) => startOn(`host-${h}`, nfs.mounts[h]!, ['--concurrency', '4', ...(hosts.length > 1 ? ['--shard', `${i}/${hosts.length}`] : [])]));
    await until(() => ds.every((d) => d.lines.some((l) => l.rec.kind === 'daemon_started')), 120_000, 'daemons start');
    const t = Date.now();
    // As a sender on the file server would: into inbox/, then the doorbell (what SessionStore.deliverUserEvent does).
    for (let k = 0; k < MESSAGES; k++) {
      const id = ids[k % ids.length]!;
      dropInInbox({ inbox: path.join(nfs.export, 'sessions', id, 'inbox') }, [message(`m-${k}`)], false);
      ring(path.join(nfs.export, 'sessions'), id);
    }
    const taken = () => ids.every((id) => fs.readdirSync(path.join(nfs.export, 'sessions', id, 'inbox')).every((n) => n.startsWith('.')) && !fs.readdirSync(path.join(nfs.export, 'sessions', id, 'inbox', '.taking')).length);
    const busy = () => ds.some((d) => d.lines.filter((l) => l.rec.kind === 'run_start').length > d.lines.filter((l) => l.rec.kind === 'run_end').length);
    await until(() => taken() && !busy(), 600_000, 'all messages taken in');
    const secs = (Date.now() - t) / 1000;
    const runs = ds.reduce((n, d) => n + d.lines.filter((l) => l.rec.kind === 'run_end').length, 0);
    const spread = ds.map((d) => d.lines.filter((l) => l.rec.kind === 'run_end').length);
    await stop(ds);
    return { daemons: hosts.length, messages: MESSAGES, sessions: RUN_SESSIONS, runs, seconds: round(secs, 2), runs_per_s: round(runs / secs, 2), messages_per_s: round(MESSAGES / secs, 2), runs_per_daemon: spread };
  } finally {
    await nfs.close();
    b.cleanup();
  }
}

export async function benchScaleOut() {
  const why = missing();
  if (why) return { skipped: why };
  const out: Record<string, unknown> = {};
  if (PARTS.has('poll')) out.poll = [];
  for (const m of PARTS.has('poll') ? MOUNTS : []) (out.poll as unknown[]).push(await pollCost(m));
  if (PARTS.has('scale')) {
    const one = await throughput(['a']);
    const three = await throughput(['a', 'b', 'c']);
    Object.assign(out, { one, three, ratio_messages_per_s: round(three.messages_per_s / one.messages_per_s, 2), goal_ratio: '>= 2.4 on three hosts (one machine here: the daemons share its cores)' });
  }
  return out;
}
