/**
 * The commands a package build runs, and running one into the build's log.
 * Every command runs on the host as the daemon's user, with the daemon's
 * network, outside any sandbox (docs/sandbox.md, "Packages", says why),
 * with a small environment: the daemon's PATH, HOME, locale, proxy, CA
 * and npm settings, and nothing else of it (no model key, no secret).
 * Package names come from the schema (schema/packages.ts), which admits
 * nothing that starts with `-`; npm is also told where its options end.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { probeCapabilities } from '../sandbox/isolation.js';

/**
 * `npm install` into a prefix of its own. `--ignore-scripts`: a package's
 * install scripts would run here, on the host, outside the sandbox; the
 * packages' own code runs only in the sandbox.
 */
export function npmInstallArgs(prefix: string, specs: readonly string[]): string[] {
  return ['npm', 'install', '--prefix', prefix, '--no-audit', '--no-fund', '--ignore-scripts', '--no-update-notifier', '--', ...specs];
}

/**
 * What apt would install for `pkgs` on this host, asked without root and
 * without touching the host (`-s`: a simulation; NoLocking: no lock on the
 * package database). Its `Inst` lines are the packages and the dependencies
 * the host lacks; what the host has is in its /usr, which the sandbox sees.
 */
export function aptSimulateArgs(pkgs: readonly string[]): string[] {
  return ['apt-get', '-s', '-q', '-o', 'Debug::NoLocking=1', 'install', '--no-install-recommends', ...pkgs];
}

/** The `name=version` of each `Inst` line of a simulation (aptSimulateArgs), in its order. */
export function aptToFetch(simulation: string): string[] {
  const out: string[] = [];
  for (const line of simulation.split('\n')) {
    const m = /^Inst ([a-z0-9][a-z0-9+.:-]*) (?:\[[^\]]*\] )?\(([A-Za-z0-9.+~:-]+) /.exec(line);
    if (m) out.push(`${m[1]}=${m[2]}`);
  }
  return out;
}

/** `apt-get download` of exact versions into the current folder (no root: nothing is installed). */
export const aptDownloadArgs = (pkgs: readonly string[]): string[] => ['apt-get', 'download', '-q', ...pkgs];

/** Unpacks a .deb's files under `dest` (its maintainer scripts are not run). */
export const dpkgExtractArgs = (deb: string, dest: string): string[] => ['dpkg', '-x', deb, dest];

const PASSED = /^(?:PATH|HOME|USER|LANG|LC_ALL|TMPDIR|NODE_EXTRA_CA_CERTS|SSL_CERT_FILE|SSL_CERT_DIR|HTTPS?_PROXY|https?_proxy|NO_PROXY|no_proxy|npm_config_\w+|NPM_CONFIG_\w+)$/;

/** The environment of the build's commands: only what installing needs of the daemon's (see the module's comment). */
export function installEnv(daemonEnv: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = { PATH: '/usr/local/bin:/usr/bin:/bin' };
  for (const [k, v] of Object.entries(daemonEnv)) if (v !== undefined && PASSED.test(k)) out[k] = v;
  return out;
}

export interface StepResult {
  /** The exit code, or null when it did not exit by itself (a signal, an abort, not found). */
  code: number | null;
  /** Its standard output, when asked to keep it (it goes to the log too). */
  stdout: string;
  /** Why it did not run or was stopped, when it was. */
  problem: string | null;
}

/**
 * Runs `argv` with its output appended to the log (a line `$ argv` first).
 * Dies with this process where util-linux's setpriv can say so (a builder
 * killed with -9 takes its npm with it); killed when `signal` aborts.
 */
export function runStep(argv: readonly string[], o: { cwd: string; env: Record<string, string>; log: number; signal: AbortSignal; keepStdout?: boolean }): Promise<StepResult> {
  fs.writeSync(o.log, `$ ${argv.join(' ')}\n`);
  const full = probeCapabilities().pdeathsig ? ['setpriv', '--pdeathsig', 'KILL', ...argv] : [...argv];
  return new Promise((resolve) => {
    if (o.signal.aborted) return resolve({ code: null, stdout: '', problem: 'stopped before it started' });
    const child = spawn(full[0]!, full.slice(1), { cwd: o.cwd, env: o.env, stdio: ['ignore', o.keepStdout ? 'pipe' : o.log, o.log] });
    let stdout = '';
    child.stdout?.on('data', (d: Buffer) => {
      fs.writeSync(o.log, d);
      if (stdout.length < 4 * 1024 * 1024) stdout += d.toString('utf8');
    });
    const onAbort = () => child.kill('SIGKILL');
    o.signal.addEventListener('abort', onAbort, { once: true });
    let problem: string | null = null;
    child.on('error', (e) => (problem = `${argv[0]} could not start: ${e.message}`));
    child.on('close', (code, sig) => {
      o.signal.removeEventListener('abort', onAbort);
      if (o.signal.aborted) problem = 'stopped';
      else if (sig) problem ??= `killed by ${sig}`;
      fs.writeSync(o.log, `[exit ${code ?? sig ?? '?'}]\n`);
      resolve({ code, stdout, problem });
    });
  });
}

/**
 * Clears the setuid and setgid bits of every file under `root` (a build's
 * folder, before it is published): `dpkg -x` run by a root daemon keeps
 * them, and a setuid-root program in the package cache would be one any
 * user of the host could run. (The sandbox mounts the cache nosuid anyway.)
 * Never goes through a symlink. Returns the paths changed,
 * relative to `root`.
 */
export function stripSetId(root: string): string[] {
  const changed: string[] = [];
  const walk = (dir: string, rel: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = `${dir}/${e.name}`;
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) walk(full, r);
      else if (e.isFile() && clearSetId(full)) changed.push(r);
    }
  };
  walk(root, '');
  return changed;
}

/**
 * Clears one file's setuid/setgid bits through a descriptor of the file
 * itself (no symlink followed, no FIFO waited on): the check of its mode and
 * the change are one object, whatever is swapped in at its name meanwhile.
 */
function clearSetId(file: string): boolean {
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
  } catch {
    return false; // swapped for a link, or unreadable to a daemon that is not root (whose bits grant nothing more)
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile() || (st.mode & 0o6000) === 0) return false;
    fs.fchmodSync(fd, st.mode & 0o1777);
    return true;
  } finally {
    fs.closeSync(fd);
  }
}
