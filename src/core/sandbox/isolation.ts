/**
 * Which isolation the agent's shell runs under, and the command line that
 * builds it. Three postures, said plainly in runtime/environment.json:
 *
 * - `bwrap`: bubblewrap. Only /workspace (rw), /runtime (ro), the declared
 *   mounts and read-only system directories exist; a private /tmp; its own
 *   PID namespace; no network unless the environment says `host` (or, for
 *   `limited`, only the run's egress proxy: ./egress-bridge.ts); uid 1000
 *   with no capabilities.
 * - `unshare-net`: a user + network + PID namespace (`unshare`), with no
 *   filesystem confinement. Used by `sandbox: auto` where bwrap does not work
 *   and the network must be closed.
 * - `unconfined`: a plain process in the workspace. Only with `sandbox:
 *   process` (an explicit opt-in), or `auto` with `network: host` where bwrap
 *   does not work.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import type { EnvironmentDefinition, NetworkPosture } from '../schema/index.js';
import { bwrapEgress, hostEgress } from './egress-bridge.js';

export type Isolation = 'bwrap' | 'unshare-net' | 'unconfined';

export interface Capabilities {
  bwrap: boolean;
  unshare: boolean;
  /**
   * `setpriv --pdeathsig` works: unshare can be told to die with the daemon
   * (bwrap has --die-with-parent; unshare has no such flag, and a process
   * started with pipes, not a pty, gets no SIGHUP when the daemon dies).
   */
  pdeathsig: boolean;
  /** Why a probe failed, for runtime/environment.json. */
  notes: string[];
}

let cached: Capabilities | null = null;

const SYSTEM_DIRS = ['/usr', '/etc/alternatives', '/etc/ld.so.cache', '/etc/ssl', '/etc/ca-certificates'];

/** Probes once per process which isolation works on this machine. */
export function probeCapabilities(): Capabilities {
  if (cached) return cached;
  const notes: string[] = [];
  const b = spawnSync('bwrap', [...bwrapBase({ network: 'none' }), '--', '/bin/true'], { timeout: 5000, stdio: ['ignore', 'ignore', 'pipe'] });
  const bwrap = b.status === 0;
  if (!bwrap) notes.push(`bwrap: ${b.error ? b.error.message : (b.stderr?.toString().trim() || `exit ${b.status}`)}`);
  const u = spawnSync('unshare', ['-r', '-n', '-p', '-f', '--kill-child', '/bin/true'], { timeout: 5000, stdio: ['ignore', 'ignore', 'pipe'] });
  const unshare = u.status === 0;
  if (!unshare) notes.push(`unshare: ${u.error ? u.error.message : (u.stderr?.toString().trim() || `exit ${u.status}`)}`);
  const pdeathsig = spawnSync('setpriv', ['--pdeathsig', 'KILL', '/bin/true'], { timeout: 5000, stdio: 'ignore' }).status === 0;
  cached = { bwrap, unshare, pdeathsig, notes };
  return cached;
}

export interface Posture {
  isolation: Isolation;
  requested: EnvironmentDefinition['sandbox'];
  network: EnvironmentDefinition['network'];
  /** Whether the network is actually closed for the shell (limited: closed but for the egress proxy). */
  network_closed: boolean;
  /** Whether file access is confined to the mounts. */
  filesystem_confined: boolean;
  reason: string;
}

/** Chooses the posture for an environment, or explains why it cannot run. */
export function choosePosture(env: EnvironmentDefinition, caps: Capabilities = probeCapabilities()): Posture | { error: string } {
  const base = { requested: env.sandbox, network: env.network };
  if (env.sandbox === 'process') {
    if (env.network === 'limited') return { error: 'network: limited needs the sandbox to close the network, and sandbox: process does not: use sandbox: auto or bwrap' };
    return { ...base, isolation: 'unconfined', network_closed: false, filesystem_confined: false, reason: 'sandbox: process (explicit opt-in): the shell runs as a plain process in the workspace' };
  }
  if (caps.bwrap) {
    return { ...base, isolation: 'bwrap', network_closed: env.network !== 'host', filesystem_confined: true, reason: env.network === 'limited' ? 'bubblewrap works here; the network is the egress proxy only' : 'bubblewrap works here' };
  }
  if (env.sandbox === 'bwrap') return { error: `the environment requires sandbox: bwrap, but bubblewrap does not work here (${caps.notes.join('; ')})` };
  if (env.network === 'none' || env.network === 'limited') {
    if (caps.unshare) {
      return { ...base, isolation: 'unshare-net', network_closed: true, filesystem_confined: false, reason: `bubblewrap does not work here (${caps.notes.join('; ')}); network closed with unshare, files NOT confined` };
    }
    return { error: `network: ${env.network} needs bubblewrap or unshare, and neither works here (${caps.notes.join('; ')})` };
  }
  return { ...base, isolation: 'unconfined', network_closed: false, filesystem_confined: false, reason: `bubblewrap does not work here (${caps.notes.join('; ')}); network: host, so the shell runs unconfined` };
}

/** bwrap arguments common to every sandbox: system dirs read-only, private /tmp, new namespaces. */
export function bwrapBase(o: { network: 'none' | 'host' }): string[] {
  const args = ['--ro-bind', '/usr', '/usr'];
  for (const [link, target] of [
    ['/bin', 'usr/bin'],
    ['/sbin', 'usr/sbin'],
    ['/lib', 'usr/lib'],
    ['/lib64', 'usr/lib64'],
    ['/lib32', 'usr/lib32'],
  ] as const) {
    if (fs.existsSync(`/${target}`)) args.push('--symlink', target, link);
  }
  for (const d of SYSTEM_DIRS.slice(1)) if (fs.existsSync(d)) args.push('--ro-bind', d, d);
  args.push('--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp');
  args.push('--unshare-all', '--unshare-user', '--uid', '1000', '--gid', '1000', '--die-with-parent', '--hostname', 'sandbox');
  if (o.network === 'host') {
    args.push('--share-net');
    for (const f of ['/etc/resolv.conf', '/etc/hosts', '/etc/nsswitch.conf']) if (fs.existsSync(f)) args.push('--ro-bind', f, f);
  }
  return args;
}

export interface MountSpec {
  /** Absolute host path. */
  host: string;
  /** Absolute path inside the sandbox. */
  target: string;
  writable: boolean;
  /**
   * The file tools replace a file here whole (temp file + rename beneath the
   * mount), never in place, so a reader (another session of the agent)
   * never sees a torn file: /memory and /substrate (docs/memory.md).
   */
  atomic?: boolean;
  /** The largest file the file tools write here (bytes); a larger write is refused with code `too_large`. */
  maxFileBytes?: number;
}

/**
 * The command line that starts `argv` under the given isolation. The
 * environment is not on it: it is passed to the spawned process itself, so
 * secret values never show in /proc/<pid>/cmdline.
 */
export function isolatedCommand(isolation: Isolation, o: { network: NetworkPosture; mounts: MountSpec[]; cwd: string; argv: string[]; egress?: string | null }): string[] {
  // limited without a proxy (no egress service in this run) is none: closed.
  const egress = o.network === 'limited' ? (o.egress ?? null) : null;
  if (isolation === 'bwrap') {
    const args = bwrapBase({ network: o.network === 'host' ? 'host' : 'none' });
    for (const m of o.mounts) args.push(m.writable ? '--bind' : '--ro-bind', m.host, m.target);
    args.push('--chdir', o.cwd);
    if (!egress) return ['bwrap', ...args, '--', ...o.argv];
    const e = bwrapEgress(egress, o.argv);
    return ['bwrap', ...args, ...e.binds, '--', ...e.argv];
  }
  if (isolation === 'unshare-net') {
    // --kill-child takes the namespace's first process (and so all of it) down
    // with unshare; the parent-death signal takes unshare down with the daemon.
    const dieWithDaemon = probeCapabilities().pdeathsig ? ['setpriv', '--pdeathsig', 'KILL'] : [];
    return [...dieWithDaemon, 'unshare', '-r', '-n', '-p', '-f', '-m', '--mount-proc', '--kill-child', ...(egress ? hostEgress(egress, o.argv) : o.argv)];
  }
  return o.argv;
}
