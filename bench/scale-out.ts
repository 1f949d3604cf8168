/**
 * `npm run bench -- scale-out` (on request): several hosts on one home over
 * sshfs (tests/helpers/sshfs-home.ts: an sshd on 127.0.0.1, one mount per
 * host, each daemon in its own namespaces), on the scripted model.
 *
 * - poll: one daemon `--poll` on SESSIONS idle sessions: its CPU while idle
 *   (share of one core) and the latency from a file renamed into a
 *   session's inbox/ to the daemon's run_start, p50 and p90;
 * - scale: MESSAGES messages over RUN_SESSIONS sessions dropped at once
 *   (through inbox/), run by one daemon, then by three (`--shard i/3`,
 *   concurrency 4 each): runs per second and the ratio. On a 2-core machine
 *   three daemons share the same two cores, so the ratio says what sharing
 *   costs there, not what three hosts give.
 *
 * Sizes: SCALE_SESSIONS (default 1000), SCALE_MESSAGES (500), SCALE_RUN_SESSIONS (50).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { benchHome, manySessions } from './fixtures.js';
import { percentile, round } from './stats.js';
import { missing, onHost, signalOnHost, sshfsHome } from '../tests/helpers/sshfs-home.js';
import { dropInInbox } from '../src/core/store/inbox-drop.js';

const CLI = path.resolve(import.meta.dirname, '..', 'dist', 'cli', 'main.js');
const SESSIONS = Number(process.env.SCALE_SESSIONS ?? 1000);
const MESSAGES = Number(process.env.SCALE_MESSAGES ?? 500);
const RUN_SESSIONS = Number(process.env.SCALE_RUN_SESSIONS ?? 50);
const TICK_MS = 10; // clock ticks of /proc/<pid>/stat (USER_HZ 100)

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

/** CPU ticks of the daemon (the child of unshare). */
function ticksOf(d: Daemon): number {
  const kid = fs.readFileSync(`/proc/${d.proc.pid}/task/${d.proc.pid}/children`, 'utf8').trim().split(/\s+/)[0];
  const stat = fs.readFileSync(`/proc/${kid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(f[11]) + Number(f[12]);
}

async function stop(ds: Daemon[]) {
  for (const d of ds) signalOnHost(d.proc.pid!, 'SIGTERM');
  await Promise.all(ds.map((d) => (d.proc.exitCode === null ? new Promise((r) => d.proc.once('exit', r)) : null)));
}

const message = (text: string) => JSON.stringify({ type: 'user.message', content: text });

async function pollCost() {
  const b = benchHome();
  const nfs = await sshfsHome(['a'], ['dcache_timeout=1']);
  try {
    // Made on the local disk, then put on the file server's.
    const ids = manySessions(b, SESSIONS);
    fs.cpSync(b.root, nfs.export, { recursive: true });
    const d = startOn('host-a', nfs.mounts.a!, []);
    await until(() => d.lines.some((l) => l.rec.kind === 'daemon_started'), 120_000, 'daemon start');
    await sleep(5000); // settle: the start's sweep, the search index
    const t0 = ticksOf(d);
    const idleS = 20;
    await sleep(idleS * 1000);
    const idleCpu = ((ticksOf(d) - t0) * TICK_MS) / (idleS * 1000);
    const lat: number[] = [];
    for (let i = 0; i < 15; i++) {
      const id = ids[(i * 37) % ids.length]!;
      const at = Date.now();
      dropInInbox({ inbox: path.join(nfs.mounts.a!, 'sessions', id, 'inbox') }, [message(`ping ${i}`)], false);
      await until(() => d.lines.some((l) => l.rec.kind === 'run_start' && l.rec.session_id === id && l.at >= at), 30_000, 'a run');
      lat.push(d.lines.find((l) => l.rec.kind === 'run_start' && l.rec.session_id === id && l.at >= at)!.at - at);
      await sleep(500 + Math.random() * 1500);
    }
    await stop([d]);
    return { sessions: SESSIONS, idle_cpu_share_of_core: round(idleCpu, 4), goal_idle_cpu: '< 0.05', append_to_running_ms: { p50: round(percentile(lat, 50)), p90: round(percentile(lat, 90)) }, goal_p50_ms: '< 300' };
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
    for (let k = 0; k < MESSAGES; k++) dropInInbox({ inbox: path.join(nfs.export, 'sessions', ids[k % ids.length]!, 'inbox') }, [message(`m-${k}`)], false);
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
  const poll = await pollCost();
  const one = await throughput(['a']);
  const three = await throughput(['a', 'b', 'c']);
  return { poll, one, three, ratio_messages_per_s: round(three.messages_per_s / one.messages_per_s, 2), goal_ratio: '>= 2.4 on three hosts (one machine here: the daemons share its cores)' };
}
