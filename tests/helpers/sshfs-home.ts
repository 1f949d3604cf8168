/**
 * One folder served over sshfs from an sshd on 127.0.0.1 (an ephemeral
 * port), mounted several times: each mount stands for a host's view of a
 * shared home, with what a network file system brings (attribute caching,
 * no inotify events for other clients' writes, no atomic appends across
 * clients). Needs root, /dev/fuse, sshfs, sshd and unshare; `missing()`
 * says which is absent. Also used by bench/scale-out.ts.
 */
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

const SSHD = '/usr/sbin/sshd';

function onPath(cmd: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;
}

/** Why the setup cannot run here, or null when it can. */
export function missing(): string | null {
  if (process.getuid?.() !== 0) return 'needs root (unshare and FUSE mounts)';
  if (!fs.existsSync('/dev/fuse')) return 'needs /dev/fuse';
  if (!fs.existsSync(SSHD)) return 'needs openssh-server (/usr/sbin/sshd)';
  for (const c of ['sshfs', 'unshare', 'ssh-keygen']) if (!onPath(c)) return `needs ${c}`;
  if (!onPath('fusermount') && !onPath('fusermount3')) return 'needs fusermount';
  return null;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

async function listening(port: number, ms: number): Promise<void> {
  const end = Date.now() + ms;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const c = net.connect(port, '127.0.0.1', () => {
        c.end();
        resolve(true);
      });
      c.once('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > end) throw new Error(`sshd did not listen on 127.0.0.1:${port} within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export interface SshfsHome {
  /** The served folder (the "file server's" disk). */
  export: string;
  /** One mount point per host name. */
  mounts: Record<string, string>;
  /** The sshd serving them (its children serve each mount's sftp session). */
  sshdPid: number;
  close(): Promise<void>;
}

/**
 * Serves a new folder and mounts it once per host. `sshfsOptions`: the
 * attribute cache is kept to about a second (dcache_timeout=1; FUSE's own
 * attr_timeout is 1 s), as docs/daemon.md asks of a shared home's mount.
 */
export async function sshfsHome(hosts: readonly string[], sshfsOptions = ['dcache_timeout=1']): Promise<SshfsHome> {
  const t = fs.mkdtempSync(path.join(os.tmpdir(), 'openboa-sshfs-'));
  const exp = path.join(t, 'export');
  fs.mkdirSync(exp);
  fs.mkdirSync('/run/sshd', { recursive: true });
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', path.join(t, 'host')]);
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', path.join(t, 'user')]);
  fs.copyFileSync(path.join(t, 'user.pub'), path.join(t, 'authorized_keys'));
  fs.chmodSync(path.join(t, 'authorized_keys'), 0o600);
  let sshd: ChildProcess | null = null;
  let port = 0;
  for (let attempt = 0; attempt < 5 && !sshd; attempt++) {
    port = await freePort();
    fs.writeFileSync(
      path.join(t, 'sshd_config'),
      [`Port ${port}`, 'ListenAddress 127.0.0.1', `HostKey ${t}/host`, `AuthorizedKeysFile ${t}/authorized_keys`, 'PermitRootLogin prohibit-password', 'PasswordAuthentication no', 'StrictModes no', 'Subsystem sftp internal-sftp', `PidFile ${t}/sshd.pid`, 'MaxStartups 100', 'MaxSessions 100', ''].join('\n'),
    );
    // -D: in the foreground, as our child, so it goes when we stop it.
    const child = spawn(SSHD, ['-D', '-f', path.join(t, 'sshd_config')], { stdio: 'ignore' });
    try {
      await listening(port, 5000);
      sshd = child;
    } catch {
      child.kill('SIGKILL'); // the port was taken meanwhile: another one
    }
  }
  if (!sshd) throw new Error('could not start sshd on 127.0.0.1');
  const mounts: Record<string, string> = {};
  const opts = ['-o', `IdentityFile=${t}/user`, '-o', 'StrictHostKeyChecking=no', '-o', 'UserKnownHostsFile=/dev/null', '-o', `port=${port}`, '-o', 'LogLevel=ERROR', ...sshfsOptions.flatMap((o) => ['-o', o])];
  const unmount = (dir: string) => spawnSync(onPath('fusermount3') ? 'fusermount3' : 'fusermount', ['-u', '-z', dir], { stdio: 'ignore' });
  const close = async () => {
    for (const m of Object.values(mounts)) unmount(m);
    sshd?.kill('SIGTERM');
    fs.rmSync(t, { recursive: true, force: true });
  };
  try {
    for (const h of hosts) {
      const m = path.join(t, `mnt-${h}`);
      fs.mkdirSync(m);
      execFileSync('sshfs', [`root@127.0.0.1:${exp}`, m, ...opts], { stdio: ['ignore', 'ignore', 'pipe'] });
      mounts[h] = m;
    }
  } catch (e) {
    await close();
    throw e;
  }
  return { export: exp, mounts, sshdPid: sshd.pid!, close };
}

/**
 * Sends `signal` to the command onHost started under `unshare` (pid
 * `unsharePid`): unshare itself ignores SIGTERM and SIGINT while it waits.
 */
export function signalOnHost(unsharePid: number, signal: NodeJS.Signals): void {
  let kids: string[] = [];
  try {
    kids = fs.readFileSync(`/proc/${unsharePid}/task/${unsharePid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean);
  } catch {
    return; // gone already
  }
  for (const k of kids) {
    try {
      process.kill(Number(k), signal);
    } catch {
      // gone meanwhile
    }
  }
}

/**
 * The argv that runs `cmd` as a process of host `name`: its own PID, UTS
 * and mount namespaces (its own hostname and pid numbers; the mounts are
 * copied in). SIGKILL to the returned process kills the command with it;
 * for any other signal, signalOnHost.
 */
export function onHost(name: string, cmd: readonly string[]): string[] {
  const quoted = cmd.map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(' ');
  return ['unshare', '--pid', '--uts', '--mount', '--fork', '--kill-child=SIGKILL', '--mount-proc', 'sh', '-c', `hostname ${name} && exec ${quoted}`];
}
