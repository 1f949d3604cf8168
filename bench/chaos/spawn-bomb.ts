/**
 * Part 6, the spawn bomb. An agent with `delegates: self` whose scripted
 * model answers every task with `fanOut` spawn_session calls of itself,
 * run by the real daemon (docs/delegation.md, "Limits over the tree" and
 * "Stopping a tree that is still spawning").
 *
 *  1. limits     two bombs at once in one home: one with the default
 *                limits, one with the spawn rate lifted so the tree limit
 *                (50 sessions) is what stops it. Neither tree may pass 50
 *                by more than the spawns one daemon can have in flight
 *                (concurrency - 1), the model must read the refusals, and
 *                `openboa status` of the root must show them.
 *  2. interrupt  a bomb with both limits lifted grows to `interruptAt`
 *                sessions; then `openboa interrupt <root>`. No session may
 *                be made after the interrupt's line, no run that opens
 *                after it may ask the model anything, and the whole tree
 *                must go idle.
 */
import fs from 'node:fs';
import path from 'node:path';
import { cli, createSession, listSessions, readLog, round, sessionDir, sleep, startReady, tempHome, textOf, writeFile, type DaemonProc, type LogLine } from './common.js';
import { startModelServer, type Reply, type RequestBody } from './model-server.js';

export interface SpawnBombOptions {
  fanOut: number;
  concurrency: number;
  /** Sessions the lifted bomb grows to before it is interrupted. */
  interruptAt: number;
  /** Pause between the model's SSE chunks, so runs are in flight when the interrupt lands. */
  chunkDelayMs: number;
  settleTimeoutS: number;
  keep: boolean;
}

/** The default limits.max_tree_sessions (src/core/schema/roster.ts). */
const TREE_LIMIT = 50;
/** A run with nothing for this long, and none in flight: the daemon has nothing left to do. */
const QUIET_MS = 3000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** Every fresh task (a user turn without tool results) gets `fanOut` spawns; their results get a short text. */
function bombReply(fanOut: number, chunkDelayMs: number) {
  return (body: RequestBody): Reply => {
    const last = body.messages?.at(-1);
    const answered = Array.isArray(last?.content) && last.content.some((b) => b.type === 'tool_result');
    if (answered) return { text: 'spawned my helpers', chunkDelayMs };
    return { toolUses: Array.from({ length: fanOut }, () => ({ name: 'spawn_session', input: { agent: 'self', message: `do the same: split this in ${fanOut}` } })), chunkDelayMs };
  };
}

function bombAgent(home: string, id: string, limits: Record<string, number>) {
  const lines = ['description: spawns copies of itself on every task', 'provider: anthropic', 'model: chaos-model', 'environment: local', 'delegates: self'];
  const keys = Object.entries(limits);
  if (keys.length) lines.push('limits:', ...keys.map(([k, v]) => `  ${k}: ${v}`));
  writeFile(home, `agents/${id}/agent.yaml`, `${lines.join('\n')}\n`);
}

const sessionIds = (home: string) => fs.readdirSync(path.join(home, 'sessions')).filter((n) => UUID.test(n));
const logOf = (home: string, id: string): LogLine[] => readLog(path.join(sessionDir(home, id), 'events.jsonl')).events;

/** Waits until the daemon has had no run in flight and printed nothing about runs for QUIET_MS; false after `ms`. */
async function quiet(d: DaemonProc, ms: number): Promise<boolean> {
  const t0 = Date.now();
  for (;;) {
    const last = d.lines.findLast((l) => l.kind === 'run_start' || l.kind === 'run_end')?.received_ms ?? d.spawnedMs;
    if (d.inFlight() === 0 && Date.now() - last >= QUIET_MS) return true;
    if (Date.now() - t0 > ms) return false;
    await sleep(250);
  }
}

/** The root of each session, through the parents its own session.created names. */
function rootsOf(home: string): Map<string, string> {
  const parent = new Map<string, string | null>();
  for (const id of sessionIds(home)) parent.set(id, (logOf(home, id)[0]?.event.parent_session_id as string | undefined) ?? null);
  const roots = new Map<string, string>();
  for (const id of parent.keys()) {
    let at = id;
    for (let i = 0; i < 100 && parent.get(at); i++) at = parent.get(at) as string;
    roots.set(id, at);
  }
  return roots;
}

const env = (url: string) => ({ ANTHROPIC_BASE_URL: url, ANTHROPIC_API_KEY: 'chaos-not-a-key', ANTHROPIC_AUTH_TOKEN: undefined });

async function limitsPart(o: SpawnBombOptions) {
  const server = await startModelServer(bombReply(o.fanOut, o.chunkDelayMs));
  const home = tempHome('bomb-limits');
  bombAgent(home, 'bomb', {});
  bombAgent(home, 'bomb-fast', { max_spawns_per_minute: 100_000 });
  const roots = { defaults: await createSession(home, 'bomb'), fast: await createSession(home, 'bomb-fast') };
  const daemon = await startReady(home, env(server.url), ['--concurrency', String(o.concurrency)], []);
  for (const id of Object.values(roots)) await cli(home, ['send', id, 'split this up']);
  const settled = await quiet(daemon, o.settleTimeoutS * 1000);
  const status = await cli(home, ['status', roots.fast]);
  await daemon.term();
  await server.close();

  const rootOf = rootsOf(home);
  const size = (root: string) => [...rootOf.values()].filter((r) => r === root).length;
  const refusals = { read: 0, logged: 0 };
  for (const id of sessionIds(home)) {
    for (const l of logOf(home, id)) {
      if (l.event.type === 'session.spawn_refused') refusals.logged += 1;
      if (l.event.type === 'agent.tool_result' && l.event.is_error === true && /^not spawned: .*\(limits\.max_(tree_sessions|spawns_per_minute) of /.test(textOf(l.event.content))) refusals.read += 1;
    }
  }
  const bound = TREE_LIMIT + o.concurrency - 1;
  const sizes = { defaults: size(roots.defaults), fast: size(roots.fast) };
  return {
    home,
    figures: { sessions_default_limits: sizes.defaults, sessions_rate_lifted: sizes.fast, bound, refusals_read_by_model: refusals.read, refusals_logged: refusals.logged, model_requests: server.stats.requests },
    invariants: {
      /** A tree that outgrew the tree limit by more than the spawns one daemon can have in flight. */
      tree_over_limit: Math.max(0, sizes.defaults - bound) + Math.max(0, sizes.fast - bound),
      /** The model never read a refusal naming a limit (the bomb was not stopped by one). */
      refusals_unread: refusals.read > 0 ? 0 : 1,
      /** `openboa status <root>` does not show the refusals in its tree. */
      refusals_not_in_status: /\d+ spawn\(s\) refused in it/.test(status.stdout) && /(refused here; the last|the last refused by \S+) at \S+: not spawned: /.test(status.stdout) ? 0 : 1,
      limits_not_settled: settled ? 0 : 1,
    },
  };
}

async function interruptPart(o: SpawnBombOptions) {
  const server = await startModelServer(bombReply(o.fanOut, o.chunkDelayMs));
  const home = tempHome('bomb-interrupt');
  bombAgent(home, 'bomb', { max_tree_sessions: 2000, max_spawns_per_minute: 100_000 });
  const root = await createSession(home, 'bomb');
  const daemon = await startReady(home, env(server.url), ['--concurrency', String(o.concurrency)], []);
  const tGrow = Date.now();
  await cli(home, ['send', root, 'split this up']);
  while (sessionIds(home).length < o.interruptAt && Date.now() - tGrow < o.settleTimeoutS * 1000) await sleep(20);
  const growMs = Date.now() - tGrow;
  const inFlight = daemon.inFlight();
  const interrupted = await cli(home, ['interrupt', root]);
  const atInterrupt = sessionIds(home).length;
  const tStop = Date.now();
  const settled = await quiet(daemon, o.settleTimeoutS * 1000);
  const stopMs = Date.now() - tStop - QUIET_MS;
  const rows = await listSessions(home);
  await daemon.term();
  await server.close();

  const at = logOf(home, root).findLast((l) => l.event.type === 'user.interrupt')?.event.created_at as string | undefined;
  const T = at ? Date.parse(at) : Infinity;
  const ids = sessionIds(home);
  let madeAfter = 0;
  let workAfter = 0;
  let runsAfter = 0;
  let bornInterrupted = 0;
  let refusedInterrupted = 0;
  for (const id of ids) {
    const log = logOf(home, id);
    if (Date.parse(String(log[0]?.event.created_at)) > T) madeAfter += 1;
    // Runs that opened after the interrupt, and whether any of them asked the model.
    const opened = new Set(log.filter((l) => l.event.type === 'session.status_running' && l.event.continuation !== true && Date.parse(String(l.event.created_at)) > T).map((l) => String(l.event.wake_id)));
    runsAfter += opened.size;
    if (log.some((l) => l.event.type === 'span.model_request_start' && opened.has(String(l.event.wake_id)))) workAfter += 1;
    if (log.some((l) => l.event.type === 'user.interrupt' && / above this one was interrupted at /.test(String(l.event.reason)))) bornInterrupted += 1;
    refusedInterrupted += log.filter((l) => l.event.type === 'session.spawn_refused' && l.event.reason === 'interrupted').length;
  }
  const notIdle = rows.filter((r) => r.status !== 'idle').length;
  return {
    home,
    figures: { sessions_at_interrupt: atInterrupt, sessions_after: ids.length, runs_in_flight_at_interrupt: inFlight, grow_s: round(growMs / 1000), stop_s: round(stopMs / 1000), runs_opened_after_interrupt: runsAfter, born_interrupted: bornInterrupted, spawns_refused_as_interrupted: refusedInterrupted, interrupt_exit: interrupted.code },
    invariants: {
      /** Sessions whose session.created is later than the root's interrupt. */
      sessions_made_after_interrupt: madeAfter,
      /** Sessions in the home once all was quiet, over those there when `openboa interrupt` returned. */
      growth_after_interrupt: Math.max(0, ids.length - atInterrupt),
      /** Sessions with a run that opened after the interrupt and asked the model anything. */
      work_started_after_interrupt: workAfter,
      /** Sessions not idle once the daemon had nothing left to do. */
      sessions_not_idle: notIdle,
      /** The bomb did not reach `interruptAt` sessions, so the interrupt did not land mid-growth. */
      interrupt_not_mid_growth: atInterrupt >= o.interruptAt && inFlight > 0 ? 0 : 1,
      interrupt_not_settled: settled && interrupted.code === 0 && at ? 0 : 1,
    },
  };
}

export async function spawnBomb(o: SpawnBombOptions) {
  const t0 = Date.now();
  const limits = await limitsPart(o);
  const interrupt = await interruptPart(o);
  const invariants = { ...limits.invariants, ...interrupt.invariants };
  const ok = Object.values(invariants).every((v) => v === 0);
  const result = {
    part: 'spawn bomb',
    options: o,
    figures: { limits: limits.figures, interrupt: interrupt.figures },
    invariants,
    durations_s: { total: round((Date.now() - t0) / 1000) },
    home: null as string | null,
  };
  if (!o.keep && ok) {
    fs.rmSync(limits.home, { recursive: true, force: true });
    fs.rmSync(interrupt.home, { recursive: true, force: true });
  } else result.home = `${limits.home} ${interrupt.home}`;
  return result;
}
