/**
 * Opening a run: its definitions (agent, environment, the model from the
 * registry), then its immutable RunContext — the environment and secrets,
 * the tool catalog and skills, the sandbox, the log window, runtime/, with
 * what the run's services add (loop-hooks.ts, RunService) — and
 * the RunControl wired to everything that may cut it short (the caller's
 * signal, a lost lease, the run's deadline). Also the runtime/ files that
 * describe the run as it starts.
 */
import { loadAgent, loadEnvironment, rel, type LoadedAgent, type LoadedEnvironment } from '../definitions/definitions.js';
import type { Lease } from '../foundation/lease.js';
import type { ModelProvider } from '../model/provider.js';
import type { SessionSnapshot } from '../schema/index.js';
import { ToolCatalog } from '../tools/catalog.js';
import { buildRunEnvironment } from './environment.js';
import { environmentSecrets } from './agent-secrets.js';
import { LogWindow } from './log-window.js';
import type { RunPlan } from './plan.js';
import { RuntimeFiles } from './runtime-files.js';
import { type RunContext, type Runtime } from './run-context.js';
import { RunControl, type AbortReason } from './run-control.js';
import { type WakeOptions } from './wake-api.js';
import { loadSkills } from './skills.js';
import { RunState } from './run-state.js';
import type { RunService } from './loop-hooks.js';
import type { SandboxSpec } from '../sandbox/sandbox.js';

export interface Definitions {
  agent: LoadedAgent;
  environment: LoadedEnvironment;
  model: ModelProvider;
}

/** The session's definitions and its model; throws when they do not load (see definitionProblem). */
export function loadDefinitions(rt: Runtime, snap: SessionSnapshot): Definitions {
  const agent = loadAgent(rt.home, snap.agent_id);
  const environment = loadEnvironment(rt.home, snap.environment_id);
  const factory = rt.deps.models[agent.def.provider];
  if (!factory) throw new Error(`no model provider "${agent.def.provider}" is registered`);
  return { agent, environment, model: factory(agent, rt.home, rt.deps.env) };
}

export interface OpenedRun {
  ctx: RunContext;
  /** Problems of the agent's skills, as "<file>: <message>". */
  skillProblems: string[];
  /** Stops listening for aborts and closes the sandbox. Call once, when the run's work is over. */
  dispose(): void;
}

export interface OpenInput {
  sessionId: string;
  runId: string;
  snap: SessionSnapshot;
  plan: RunPlan;
  lease: Lease;
  wakeReason: string;
  opts: WakeOptions;
  defs: Definitions;
  /** The run's services (defaultServices()): their secrets, tools and sandbox wrappers go into the context; each is closed by dispose(). */
  services: readonly RunService[];
}

export async function openRun(rt: Runtime, x: OpenInput): Promise<OpenedRun> {
  const { store, deps } = rt;
  const { agent, environment } = x.defs;
  const paths = store.paths(x.sessionId);
  const serviceSecrets = Object.assign({}, ...x.services.map((sv) => sv.secrets?.(rt, agent, { sessionId: x.sessionId, runId: x.runId }) ?? {})) as Record<string, string>;
  const env = buildRunEnvironment({ home: rt.home, paths, def: environment.def, overrides: x.snap.overrides, daemonEnv: deps.env, sessionId: x.sessionId, agentId: agent.id, wakeId: x.runId, wakeReason: x.wakeReason, modelSecrets: x.defs.model.secrets ?? {}, extraSecrets: serviceSecrets, sharedSecrets: environmentSecrets(rt.home, deps.env), memory: agent.def.memory });
  // What the services add: variables of the sandbox's environment, tools beside the built-ins, changes of the sandbox's spec, wrappers of the sandbox (in list order).
  for (const sv of x.services) Object.assign(env.env, sv.sandboxEnv?.({ rt, agent, environment, sessionId: x.sessionId, runId: x.runId, env }) ?? {});
  const provided = x.services.map((sv) => sv.provide?.({ rt, agent, environment, sessionId: x.sessionId, runId: x.runId, env }) ?? {});
  const tools = provided.find((p) => p.tools)?.tools ?? null;
  const { skills, problems } = loadSkills(agent.dir);
  const control = new RunControl();

  // Everything that may cut the run short reaches it through the control.
  const external = x.opts.signal;
  const onExternal = () => control.abort((external?.reason as AbortReason | undefined)?.kind ? (external?.reason as AbortReason) : { kind: 'shutdown' });
  external?.addEventListener('abort', onExternal, { once: true });
  if (external?.aborted) onExternal(); // aborted before we listened
  const onLease = () => control.abort({ kind: 'lease_lost', message: String((x.lease.signal.reason as Error)?.message ?? 'lease lost') });
  x.lease.signal.addEventListener('abort', onLease, { once: true });
  const deadlineS = agent.def.limits.max_wake_seconds;
  const cancelDeadline = deps.clock.setTimer(deadlineS * 1000, () => control.abort({ kind: 'deadline', seconds: deadlineS }));

  const spec = provided.reduce((sp, p) => (p.sandboxSpec ? p.sandboxSpec(sp) : sp), {
    isolation: env.posture?.isolation ?? 'unconfined',
    network: env.network,
    mounts: env.mounts,
    env: env.env,
    homeDir: env.homeDir,
    workspaceHost: paths.workspace,
    runtimeDir: paths.runtime,
    redactor: env.redactor,
    clock: deps.clock,
    unavailable: env.posture ? null : (env.sandboxError ?? 'no sandbox can run here'),
  } satisfies SandboxSpec as SandboxSpec);
  const raw = await deps.sandbox(spec);
  const sandbox = provided.reduce((sb, p) => (p.sandbox ? p.sandbox(sb) : sb), raw);
  const ctx: RunContext = {
    rt,
    sessionId: x.sessionId,
    paths,
    runId: x.runId,
    trigger: x.plan.trigger,
    wakeReason: x.wakeReason,
    startSnapshot: x.snap,
    agent,
    environment,
    env,
    catalog: new ToolCatalog(agent.def, { hasSkills: skills.length > 0, isChild: x.snap.parent_session_id !== null, mcp: tools }),
    skills,
    sandbox,
    window: new LogWindow(store, x.sessionId, x.snap, agent.def.limits.context_window_tokens * 6, () => deps.clock.now()),
    files: new RuntimeFiles(paths.runtime, env.redactor),
    control,
    state: new RunState(),
  };
  return {
    ctx,
    skillProblems: problems.map((p) => `${rel(rt.home, p.file)}: ${p.message}`),
    dispose() {
      cancelDeadline();
      external?.removeEventListener('abort', onExternal);
      x.lease.signal.removeEventListener('abort', onLease);
      sandbox.close();
      for (const sv of x.services) {
        try {
          sv.close?.(ctx);
        } catch {
          // a service's close must not throw (loop-hooks.ts); the run is over either way
        }
      }
    },
  };
}

/** runtime/ as the run starts: its environment, tools, permissions, resources, secrets (names), and each service's files. */
export function writeStartFiles(ctx: RunContext, skillProblems: string[], services: readonly RunService[]): void {
  const { env, environment, catalog, files } = ctx;
  files.json('environment.json', {
    environment_id: environment.id,
    sandbox_requested: environment.def.sandbox,
    isolation: env.posture?.isolation ?? 'unavailable',
    network: environment.def.network,
    network_closed: env.posture?.network_closed ?? false,
    filesystem_confined: env.posture?.filesystem_confined ?? false,
    reason: env.posture?.reason ?? env.sandboxError,
    shell_home: env.homeDir,
    shell: environment.def.shell,
    missing_mounts: env.missingMounts,
    skill_problems: skillProblems,
  });
  files.json('tools.json', [
    ...catalog.entries.map((e) => ({ name: e.name, kind: e.kind, ...(e.mcp ? { mcp_server_name: e.mcp.server } : {}), permission: e.permission, offered: e.permission !== 'disabled', description: e.definition.description, input_schema: e.definition.input_schema })),
    ...services.flatMap((sv) => sv.toolsFile?.() ?? []),
  ]);
  files.json('permissions.json', Object.fromEntries(catalog.entries.map((e) => [e.name, e.permission])));
  files.json('resources.json', { mounts: env.mounts.map((m) => ({ target: m.target, mode: m.writable ? 'rw' : 'ro', source: rel(ctx.rt.home, m.host) })) });
  files.json('vaults.json', { secrets: env.secretNames, missing: env.missingSecrets });
  for (const sv of services) sv.startFiles?.(ctx);
  files.ensureSummary();
}
