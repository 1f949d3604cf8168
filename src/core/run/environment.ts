/**
 * The execution contract of one run, built from the environment definition
 * and the session's overrides: the sandbox posture actually in force, the
 * mounts, and the shell's environment variables — the environment's `env`,
 * then the session's overrides, then OPENBOA_SESSION_ID/AGENT_ID/WAKE_ID/
 * WAKE_REASON. A `{secret: {env: NAME}}` value is read from the daemon's own
 * environment; every secret value feeds the run's Redactor, and so do the
 * secrets of the agent's other sessions (agent-secrets.ts), which the shell
 * does not get.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { EnvironmentDefinition, MemorySettings, NetworkPosture, SessionOverrides } from '../schema/index.js';
import { agentMounts } from '../memory/memory-dir.js';
import type { Home, SessionPaths } from '../foundation/home.js';
import { Redactor } from '../foundation/redact.js';
import { loadEnvironment } from '../definitions/definitions.js';
import { choosePosture, probeCapabilities, type MountSpec, type Posture } from '../sandbox/isolation.js';

export interface RunEnvironment {
  posture: Posture | null;
  /** Why the sandbox cannot run here, when it cannot. */
  sandboxError: string | null;
  /** Mounts as the sandbox sees them (bwrap binds them; the file tools map them). */
  mounts: MountSpec[];
  /** Declared mounts whose source does not exist. */
  missingMounts: string[];
  env: Record<string, string>;
  /** Names of secrets injected, and of those whose variable was not set. */
  secretNames: string[];
  missingSecrets: string[];
  redactor: Redactor;
  /** The shell's home and starting directory: /workspace under bwrap, the host workspace otherwise. */
  homeDir: string;
  network: NetworkPosture;
  /**
   * What the daemon's own connections to the agent's HTTP MCP servers may
   * reach: host, or loopback only (none). limited: host when the environment
   * says allow_mcp_servers (the agent's owner named those servers), else none.
   */
  mcpNetwork: 'none' | 'host';
}

export interface EnvironmentInput {
  home: Home;
  paths: SessionPaths;
  def: EnvironmentDefinition;
  overrides: SessionOverrides;
  daemonEnv: NodeJS.ProcessEnv;
  sessionId: string;
  agentId: string;
  wakeId: string;
  wakeReason: string;
  /** Secrets of the run's model provider (its API key): redacted like the environment's, never put in the shell's environment. */
  modelSecrets?: Readonly<Record<string, string>>;
  /** Secrets used outside the shell (MCP servers' env and headers): redacted like the rest, not given to the shell. */
  extraSecrets?: Record<string, string>;
  /** Secrets of the agent's other sessions (agent-secrets.ts: every environment's): redacted, since what they wrote is shared (memory, learnings); not given to the shell. */
  sharedSecrets?: Record<string, string>;
  /** agent.yaml `memory:`: mounts /memory as it says, and /substrate read-only (memory/memory-dir.ts). Absent: neither. */
  memory?: MemorySettings;
}

/**
 * The session's secrets as the given process environment has them: every
 * `{secret: {env: NAME}}` of the environment (after the session's overrides)
 * whose variable is set. Also used by the CLI to redact what it prints.
 */
export function resolveSecrets(def: EnvironmentDefinition, overrides: SessionOverrides, processEnv: NodeJS.ProcessEnv) {
  const secrets: Record<string, string> = {};
  const plain: Record<string, string> = {};
  const missing: string[] = [];
  for (const [name, value] of Object.entries({ ...def.env, ...(overrides.env ?? {}) })) {
    if (typeof value === 'string') {
      plain[name] = value;
      continue;
    }
    const v = processEnv[value.secret.env];
    if (v === undefined || v === '') missing.push(name);
    else secrets[name] = v;
  }
  return { secrets, plain, missing };
}

/** A redactor for a session's secrets, for printing; none when its environment does not load. */
export function sessionRedactor(home: Home, environmentId: string, overrides: SessionOverrides, processEnv: NodeJS.ProcessEnv): Redactor {
  try {
    return new Redactor(resolveSecrets(loadEnvironment(home, environmentId).def, overrides, processEnv).secrets);
  } catch {
    return Redactor.none;
  }
}

export function buildRunEnvironment(i: EnvironmentInput): RunEnvironment {
  const chosen = choosePosture(i.def, probeCapabilities());
  const posture = 'error' in chosen ? null : chosen;
  const sandboxError = 'error' in chosen ? chosen.error : null;

  const mounts: MountSpec[] = [
    { host: i.paths.workspace, target: '/workspace', writable: true },
    { host: i.paths.runtime, target: '/runtime', writable: false },
  ];
  const missingMounts: string[] = [];
  // /memory and /substrate are the agent's: an environment mount at or under either is left out.
  const own = i.memory ? agentMounts(i.home, i.agentId, i.memory) : [];
  const reserved = ['/memory', '/substrate'];
  for (const m of i.def.mounts) {
    const t = path.posix.normalize(m.target);
    if (i.memory && reserved.some((r) => t === r || t.startsWith(`${r}/`))) {
      missingMounts.push(`${m.source} -> ${m.target} (reserved for the agent's memory and substrate)`);
      continue;
    }
    const host = path.resolve(i.home.root, m.source);
    if (!fs.existsSync(host)) {
      missingMounts.push(`${m.source} -> ${m.target}`);
      continue;
    }
    mounts.push({ host, target: m.target, writable: m.mode === 'rw' });
  }
  mounts.push(...own);

  const homeDir = posture?.isolation === 'bwrap' ? '/workspace' : i.paths.workspace;
  const env: Record<string, string> = {
    PATH: '/usr/local/bin:/usr/bin:/bin',
    HOME: homeDir,
    TERM: 'dumb',
    NO_COLOR: '1',
    PAGER: 'cat',
    GIT_PAGER: 'cat',
    LANG: 'C.UTF-8',
  };
  const { secrets, plain, missing: missingSecrets } = resolveSecrets(i.def, i.overrides, i.daemonEnv);
  Object.assign(env, plain, secrets);
  Object.assign(env, {
    OPENBOA_SESSION_ID: i.sessionId,
    OPENBOA_AGENT_ID: i.agentId,
    OPENBOA_WAKE_ID: i.wakeId,
    OPENBOA_WAKE_REASON: i.wakeReason,
  });
  return {
    posture,
    sandboxError,
    mounts,
    missingMounts,
    env,
    secretNames: Object.keys(secrets),
    missingSecrets,
    redactor: new Redactor(mergeSecrets(mergeSecrets(mergeSecrets(secrets, i.modelSecrets ?? {}), i.extraSecrets ?? {}), i.sharedSecrets ?? {})),
    homeDir,
    network: i.def.network,
    mcpNetwork: mcpNetwork(i.def),
  };
}

/** What the daemon's connections to HTTP MCP servers may reach under an environment (RunEnvironment.mcpNetwork). */
export function mcpNetwork(def: Pick<EnvironmentDefinition, 'network' | 'allow_mcp_servers'>): 'none' | 'host' {
  if (def.network === 'limited') return def.allow_mcp_servers ? 'host' : 'none';
  return def.network;
}

/** The first secrets plus others; a name both use keeps both values (the other's under NAME_2, ...), so none goes unredacted; a value already there is not added again. */
export function mergeSecrets(secrets: Record<string, string>, extra: Readonly<Record<string, string>>): Record<string, string> {
  const out = { ...secrets };
  for (const [name, value] of Object.entries(extra)) {
    if (Object.values(out).includes(value)) continue;
    let key = name;
    for (let n = 2; Object.hasOwn(out, key); n++) key = `${name}_${n}`;
    out[key] = value;
  }
  return out;
}
