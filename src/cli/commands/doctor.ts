import fs from 'node:fs';
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

function checkModelKey(agents: AgentEntry[], env: NodeJS.ProcessEnv): Check {
  const needing = agents.filter((a) => a.def?.provider === 'anthropic').map((a) => a.id);
  const offlineIds = agents.filter((a) => a.def?.provider === 'scripted').map((a) => a.id);
  const offline = offlineIds.length ? `${offlineIds.join(', ')} run${offlineIds.length === 1 ? 's' : ''} offline` : '';
  const set = ['ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN'].find((k) => (env[k] ?? '') !== '');
  const base = env.ANTHROPIC_BASE_URL ? '; ANTHROPIC_BASE_URL points it elsewhere' : '';
  if (needing.length === 0) return { name: 'model key', status: 'ok', message: `no agent here needs one${offline ? ` (${offline})` : ''}` };
  if (set) return { name: 'model key', status: 'ok', message: `${set} is set for ${needing.join(', ')} (not checked against the API)${base}` };
  return {
    name: 'model key',
    status: 'fail',
    message: `ANTHROPIC_API_KEY is not set: ${needing.join(', ')} cannot run (set it where the daemon runs)${offline ? `; ${offline}` : ''}`,
  };
}

/**
 * Agents on provider openai: where each sends its requests, and whether it
 * has the key that endpoint needs (a local server needs none). Only listed
 * when such agents exist. Never prints a key: only the variable's name.
 */
async function checkOpenAI(agents: AgentEntry[], env: NodeJS.ProcessEnv): Promise<Check[]> {
  const oai = agents.flatMap((a) => (a.def?.provider === 'openai' ? [{ id: a.id, def: a.def }] : []));
  if (oai.length === 0) return [];
  const { openaiEndpoint } = await import('../../core/model/openai.js');
  const seen = oai.map((a) => ({ id: a.id, e: openaiEndpoint({ env, baseURL: a.def.base_url, apiKeyEnv: a.def.api_key?.secret.env }) }));
  const broken = seen.filter((s) => s.e.problem !== null);
  if (broken.length) return [{ name: 'openai key', status: 'fail', message: broken.map((s) => `${s.id}: ${s.e.problem}`).join('; ') }];
  const where = seen.map((s) => `${s.id} → ${s.e.baseURL}${s.e.key ? ` with ${s.e.key.name}` : ' without a key'}`).join(', ');
  return [{ name: 'openai key', status: 'ok', message: `${where} (not checked against the endpoint)` }];
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
  const { runningDaemon } = await import('../../daemon/home-lock.js');
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
    checkModelKey(agents, ctx.deps.env),
    ...(await checkOpenAI(agents, ctx.deps.env)),
    checkPtrace(),
    await checkDaemon(ctx),
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
