import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { CliContext } from '../command.js';
import { EXIT } from '../exit.js';
import { loadAllAgents, loadAllEnvironments, type AgentEntry, type EnvironmentEntry } from '../definitions-list.js';
import type { Colour } from '../terminal.js';

/** ok: usable; info: worth knowing; warn: works, but not as well as it could; fail: something cannot run. */
type Status = 'ok' | 'info' | 'warn' | 'fail';
interface Check {
  name: string;
  status: Status;
  message: string;
}

const COLOUR: Record<Status, Colour> = { ok: 'green', info: 'blue', warn: 'yellow', fail: 'red' };
const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** Whether a file can be created in `dir` (and removed again): a real write, not a permission guess. */
function writable(dir: string): string | null {
  const probe = path.join(dir, `.openboa-doctor-${process.pid}`);
  try {
    fs.writeFileSync(probe, '', { flag: 'wx' });
    fs.rmSync(probe);
    return null;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code ?? (e as Error).message;
  }
}

function checkHome(root: string): Check {
  if (!fs.existsSync(root)) return { name: 'home', status: 'fail', message: `${root} does not exist (openboa init ${root} creates a home there)` };
  const rootErr = writable(root);
  if (rootErr) return { name: 'home', status: 'fail', message: `${root} is not writable (${rootErr})` };
  const sessions = path.join(root, 'sessions');
  if (!fs.existsSync(sessions)) return { name: 'home', status: 'ok', message: `${root} is writable (sessions/ is created by the first session)` };
  const sessErr = writable(sessions);
  if (sessErr) return { name: 'home', status: 'fail', message: `${sessions} is not writable (${sessErr})` };
  return { name: 'home', status: 'ok', message: `${root} is writable` };
}

function checkDefinitions(agents: AgentEntry[], envs: EnvironmentEntry[]): Check {
  const broken = [...agents, ...envs].filter((x) => x.error !== undefined);
  const summary = `${plural(agents.length, 'agent')} (${agents.map((a) => a.id).join(', ') || 'none'}), ${plural(envs.length, 'environment')} (${envs.map((e) => e.id).join(', ') || 'none'})`;
  if (agents.length === 0) return { name: 'definitions', status: 'fail', message: `no agents in this home (openboa init creates the bundled demo and claude agents)` };
  if (broken.length) return { name: 'definitions', status: 'fail', message: `${summary}; ${broken.length} do not load: ${broken.map((b) => b.error).join('; ')}` };
  return { name: 'definitions', status: 'ok', message: summary };
}

async function checkSandbox(envs: EnvironmentEntry[]): Promise<Check> {
  const { probeCapabilities, choosePosture } = await import('../../core/sandbox/isolation.js');
  const caps = probeCapabilities();
  if (caps.bwrap) return { name: 'sandbox', status: 'ok', message: "bubblewrap works here: the agent's shell sees only its workspace and mounts" };
  const why = caps.notes.join('; ');
  const cannot = envs.flatMap((e) => {
    if (!e.def) return [];
    const p = choosePosture(e.def, caps);
    return 'error' in p ? [`environment ${e.id}: ${p.error}`] : [];
  });
  if (cannot.length) return { name: 'sandbox', status: 'fail', message: `bubblewrap does not work here (${why}); ${cannot.join('; ')}` };
  const fallback = caps.unshare ? 'shells run with unshare: network closed, files NOT confined' : 'shells run unconfined';
  return { name: 'sandbox', status: 'warn', message: `bubblewrap does not work here (${why}); ${fallback}; install it (apt-get install -y bubblewrap) to confine them` };
}

/** Where the models' keys are looked for: the running daemon's environment when it can be read (this host), else this shell's. */
interface KeySource {
  env: NodeJS.ProcessEnv;
  /** "this shell", or "the running daemon (pid N)". */
  where: string;
  daemon: boolean;
}

/**
 * The environment of the daemon running on this home, when it runs on this
 * host and its /proc/<pid>/environ is readable (same user): the key a run
 * uses is the daemon's, not this shell's. Only names are ever looked at.
 */
async function daemonKeySource(ctx: CliContext): Promise<KeySource | null> {
  const { runningDaemon } = await import('../../core/foundation/daemon-presence.js');
  const d = await runningDaemon(ctx.home);
  if (!d || !d.pid || (d.host && d.host !== os.hostname())) return null;
  try {
    const env: NodeJS.ProcessEnv = {};
    for (const kv of fs.readFileSync(`/proc/${d.pid}/environ`, 'latin1').split('\0')) {
      const eq = kv.indexOf('=');
      if (eq > 0) env[kv.slice(0, eq)] = kv.slice(eq + 1);
    }
    return { env, where: `the running daemon (pid ${d.pid})`, daemon: true };
  } catch {
    return null;
  }
}

/**
 * Whether each agent's model can be reached with the key it needs, agent by
 * agent: a scripted agent (the demo) needs nothing; an anthropic agent needs
 * ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN; an openai agent what its
 * endpoint needs (openaiEndpoint). Looked for in the running daemon's
 * environment when it can be read, else in this shell's, and worded as such:
 * a key missing from this shell is a warning (the daemon may be started
 * elsewhere with it), one missing from the running daemon a failure, and so
 * is a home where no agent can run. Never prints a key, only names.
 */
async function checkModels(agents: AgentEntry[], src: KeySource): Promise<Check> {
  const { openaiEndpoint } = await import('../../core/model/openai.js');
  const parts: string[] = [];
  let runnable = 0;
  let missing = 0;
  for (const a of agents) {
    if (!a.def) continue; // the definitions check reports it
    let problem: string | null = null;
    if (a.def.provider === 'scripted') parts.push(`${a.id}: offline`);
    else if (a.def.provider === 'anthropic') {
      const set = ['ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN'].find((k) => (src.env[k] ?? '') !== '');
      if (set) parts.push(`${a.id}: ${set} is set in ${src.where}${src.env.ANTHROPIC_BASE_URL ? ', ANTHROPIC_BASE_URL points it elsewhere' : ''}`);
      else problem = `ANTHROPIC_API_KEY is not set in ${src.where}`;
    } else {
      const e = openaiEndpoint({ env: src.env, baseURL: a.def.base_url, apiKeyEnv: a.def.api_key?.secret.env });
      if (e.problem) problem = e.problem.replace('the process that runs the session', src.where);
      else parts.push(`${a.id}: → ${e.baseURL}${e.key ? ` with ${e.key.name}` : ' without a key'}`);
    }
    if (problem === null) runnable += 1;
    else {
      missing += 1;
      parts.push(`${a.id}: ${problem}: ${src.daemon ? `the daemon cannot run ${a.id}` : `a daemon started from this shell could not run ${a.id} (set it where the daemon runs)`}`);
    }
  }
  if (parts.length === 0) return { name: 'models', status: 'ok', message: 'no agent loads (see definitions)' };
  const message = `${parts.join('; ')}${runnable > 0 && parts.some((p) => p.includes(' is set in ') || p.includes(' with ')) ? ' (keys not checked against the APIs)' : ''}`;
  if (runnable === 0) return { name: 'models', status: 'fail', message: `no agent can run: ${message}` };
  if (missing > 0) return { name: 'models', status: src.daemon ? 'fail' : 'warn', message };
  return { name: 'models', status: 'ok', message };
}

/**
 * Whether a process may trace its parent (Yama ptrace_scope 0): then code
 * the agent wrote and an outcome's check runs can tamper with the shell
 * that runs it, as the same user (docs/outcomes.md). A warning, not a
 * failure: sessions run, their checks are only as trustworthy as that code.
 */
export function checkPtrace(read: (file: string) => string = (f) => fs.readFileSync(f, 'utf8')): Check {
  let scope: string;
  try {
    scope = read('/proc/sys/kernel/yama/ptrace_scope').trim();
  } catch {
    return { name: 'ptrace', status: 'warn', message: "no Yama LSM here: a process may trace its parent, so code an outcome's check runs can tamper with that check (docs/outcomes.md)" };
  }
  if (scope === '0') return { name: 'ptrace', status: 'warn', message: "kernel.yama.ptrace_scope is 0: code an outcome's check runs can tamper with that check; set it to 1 (sysctl kernel.yama.ptrace_scope=1)" };
  return { name: 'ptrace', status: 'ok', message: `kernel.yama.ptrace_scope is ${scope}: a process cannot trace its parent` };
}

async function checkDaemon(ctx: CliContext): Promise<Check> {
  const { runningDaemon } = await import('../../core/foundation/daemon-presence.js');
  const d = await runningDaemon(ctx.home);
  if (!d) return { name: 'daemon', status: 'info', message: 'no daemon is running on this home (openboa daemon starts one)' };
  return { name: 'daemon', status: 'ok', message: `a daemon is running on this home${d.pid ? ` (pid ${d.pid}${d.host ? ` on ${d.host}` : ''}${d.acquired_at ? `, since ${d.acquired_at}` : ''})` : ''}` };
}

export async function run(ctx: CliContext): Promise<number | void> {
  const root = ctx.home.root;
  const agents = loadAllAgents(ctx.home);
  const envs = loadAllEnvironments(ctx.home);
  const checks: Check[] = [
    checkHome(root),
    checkDefinitions(agents, envs),
    await checkSandbox(envs),
    await checkModels(agents, (await daemonKeySource(ctx)) ?? { env: ctx.deps.env, where: 'this shell', daemon: false }),
    checkPtrace(),
    await checkDaemon(ctx),
    ...(fs.existsSync(root) ? await (await import('./doctor-shared.js')).checkSharedHome(ctx.home) : []),
  ];
  const failed = checks.filter((c) => c.status === 'fail');
  ctx.out.result({ home: root, ok: failed.length === 0, checks }, () => {
    const nameWidth = Math.max(...checks.map((c) => c.name.length));
    const lines = [`openboa doctor: home ${root}`];
    for (const c of checks) lines.push(`  ${ctx.out.paint(COLOUR[c.status], c.status.padEnd(4))}  ${c.name.padEnd(nameWidth)}  ${c.message}`);
    lines.push(failed.length ? `not ready: ${failed.map((c) => c.name).join(', ')} failed` : 'ready: sessions can run here');
    return lines.join('\n');
  });
  return failed.length ? EXIT.failure : EXIT.ok;
}
