/**
 * Part 1, the kill -9 soak. A real `openboa daemon` runs on a temp home with
 * N sessions of an anthropic-provider agent pointed at the scripted model
 * server. A driver keeps sending messages, each with a unique tag; the model
 * answers each new tag with a bash call that appends the tag to
 * /workspace/ran.txt and, after the tool result, a final text quoting it.
 * Meanwhile the daemon is killed with SIGKILL at random moments and started
 * again, K times. Then the killing stops, the daemon settles, and the files
 * are checked against the invariants (see `check`).
 */
import fs from 'node:fs';
import path from 'node:path';
import { cli, createSession, percentile, processesMentioning, readLog, rng, round, sessionDir, settle, sleep, startDaemon, startReady, tempHome, textOf, writeFile, type DaemonProc, type LogLine } from './common.js';
import { factsOf, startModelServer, type Reply, type RequestBody } from './model-server.js';

export interface SoakOptions {
  seed: number;
  sessions: number;
  kills: number;
  /** A daemon lives this long (random in the range, from its spawn) before its SIGKILL. */
  killMinMs: number;
  killMaxMs: number;
  /** Pause between a kill and the next start (random in the range). */
  downMinMs: number;
  downMaxMs: number;
  /** The driver sends one message per interval... */
  sendIntervalMs: number;
  /** ...to a session with fewer unanswered tags than this. */
  maxOutstanding: number;
  /** Share of messages sent with `openboa send` (the rest are appended by hand). */
  cliShare: number;
  /** Share of model replies streamed slowly (a pause between chunks). */
  slowShare: number;
  /** Share of bash calls with a `sleep 0.2` before or after the append. */
  sleepShare: number;
  concurrency: number;
  settleTimeoutS: number;
  keep: boolean;
}

/** Tags look like kt-07-0042 (session 7, message 42). */
const TAG_RE = /\bkt-\d+-\d+\b/g;
const tagsIn = (s: string) => s.match(TAG_RE) ?? [];
const tagOf = (s: number, n: number) => `kt-${String(s).padStart(2, '0')}-${String(n).padStart(4, '0')}`;

interface Sent {
  tag: string;
  session: number;
  via: 'cli' | 'append';
  at: number;
  /** Set when an `openboa send` failed: the message was never written. */
  failed?: string;
}

export async function soak(o: SoakOptions) {
  const r = rng(o.seed);
  const modelRng = rng(o.seed * 7919 + 1);
  const t0 = Date.now();

  // ---------------------------------------------------------------- the scripted model
  /** Tags whose final answer streamed to the end at least once (for the driver's throttle). */
  const answeredOnWire = new Set<string>();
  const answerStreams = new Map<string, number>();
  const model = {
    toolReplies: 0,
    answerReplies: 0,
    emptyReplies: 0,
    slowReplies: 0,
  };
  const decide = (body: RequestBody): Reply => {
    const f = factsOf(body);
    // Tags the user asked for, in order; tags a final text already quoted; tags a bash call was issued for.
    const asked = [...new Set(f.userTexts.flatMap(tagsIn))];
    const answered = new Set(f.assistantTexts.flatMap(tagsIn));
    const issued = new Set(f.toolUses.filter((u) => u.name === 'bash').flatMap((u) => tagsIn(String(u.input.command ?? ''))));
    const pending = asked.filter((t) => !answered.has(t));
    const needTool = pending.filter((t) => !issued.has(t));
    const slow = modelRng.chance(o.slowShare);
    if (slow) model.slowReplies += 1;
    const pace = slow ? { chunks: 8, chunkDelayMs: modelRng.int(15, 60) } : { chunks: 2, chunkDelayMs: 0 };
    if (needTool.length) {
      // One bash call per new tag. Some sleep before the append, some after, so kills land on both sides of it.
      model.toolReplies += 1;
      return {
        ...pace,
        toolUses: needTool.map((t) => {
          const append = `echo ${t} >> /workspace/ran.txt`;
          const sleepy = modelRng.chance(o.sleepShare);
          const command = !sleepy ? append : modelRng.chance(0.5) ? `sleep 0.2; ${append}` : `${append}; sleep 0.2`;
          return { name: 'bash', input: { command } };
        }),
      };
    }
    if (pending.length) {
      // Every pending tag has its tool result (a real one, or "outcome unknown" after a kill): answer, quoting them.
      model.answerReplies += 1;
      for (const t of pending) answerStreams.set(t, (answerStreams.get(t) ?? 0) + 1);
      return {
        ...pace,
        text: `done ${pending.join(' ')}`,
        onDone: () => pending.forEach((t) => answeredOnWire.add(t)),
      };
    }
    model.emptyReplies += 1;
    return { ...pace, text: 'nothing new to do' };
  };
  const server = await startModelServer(decide);

  // ---------------------------------------------------------------- the home
  const home = tempHome('soak');
  writeFile(
    home,
    'agents/chaos/agent.yaml',
    [
      'description: the chaos benchmark agent (scripted model server on 127.0.0.1)',
      'provider: anthropic',
      'model: chaos-model',
      'system: You record tags.',
      'environment: local',
      'limits:',
      // The driver keeps steering messages into running sessions; the default 12 could end a run with tags unanswered.
      '  max_model_requests_per_wake: 1000',
      '',
    ].join('\n'),
  );
  const env = { ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: 'chaos-not-a-key', ANTHROPIC_AUTH_TOKEN: undefined };
  const ids: string[] = [];
  for (let i = 0; i < o.sessions; i++) ids.push(await createSession(home, 'chaos'));

  // ---------------------------------------------------------------- the driver
  const sent: Sent[] = [];
  const nextN = ids.map(() => 0);
  const cliPending = new Set<Promise<void>>();
  let driving = true;
  const outstanding = (s: number) => sent.filter((x) => x.session === s && !x.failed && !answeredOnWire.has(x.tag)).length;
  const driver = (async () => {
    while (driving) {
      const open = ids.map((_, i) => i).filter((i) => outstanding(i) < o.maxOutstanding);
      if (open.length) {
        const s = r.pick(open);
        const tag = tagOf(s, ++nextN[s]!);
        const text = `please record ${tag}`;
        const id = ids[s] as string;
        if (r.chance(o.cliShare) && cliPending.size < 2) {
          const rec: Sent = { tag, session: s, via: 'cli', at: Date.now() };
          sent.push(rec);
          const p: Promise<void> = cli(home, ['send', id, text]).then((res) => {
            if (res.code !== 0) rec.failed = `exit ${res.code}: ${res.stderr.trim()}`;
            cliPending.delete(p);
          });
          cliPending.add(p);
        } else {
          // By hand: one O_APPEND write of one line, as `echo >>` does.
          sent.push({ tag, session: s, via: 'append', at: Date.now() });
          fs.appendFileSync(path.join(sessionDir(home, id), 'events.jsonl'), `${JSON.stringify({ type: 'user.message', content: text })}\n`);
        }
      }
      await sleep(o.sendIntervalMs);
    }
    await Promise.all([...cliPending]);
  })();

  // ---------------------------------------------------------------- the killer
  const kills: Array<{ lived_ms: number; in_flight: number; started: boolean; ready_ms: number | null; runs_ended: number }> = [];
  const crashes: Array<{ code: number | null; stderr: string }> = [];
  /** Starts refused with exit 4 ("another daemon is already running") although every earlier daemon is dead. */
  const refusals: Array<{ code: number | null; stderr: string }> = [];
  const daemonArgs = ['--concurrency', String(o.concurrency)];
  const tKill = Date.now();
  for (let k = 0; k < o.kills; k++) {
    const d = startDaemon(home, env, daemonArgs);
    const lived = r.int(o.killMinMs, o.killMaxMs);
    await Promise.race([sleep(lived), d.exited]);
    if (d.child.exitCode === 4) {
      // Refused: it believes another daemon runs on the home, though we killed (and reaped) the last one.
      refusals.push({ code: d.child.exitCode, stderr: d.stderr().slice(0, 500) });
    } else if (d.child.exitCode !== null) {
      // It died without our SIGKILL: a crash (the product must never do this).
      crashes.push({ code: d.child.exitCode, stderr: d.stderr().slice(0, 2000) });
    }
    const inFlight = d.inFlight();
    const ready = d.lines.find((l) => l.kind === 'daemon_started');
    const runsEnded = d.lines.filter((l) => l.kind === 'run_end').length;
    await d.kill9();
    kills.push({ lived_ms: lived, in_flight: inFlight, started: !!ready, ready_ms: ready ? ready.received_ms - d.spawnedMs : null, runs_ended: runsEnded });
    if (process.env.CHAOS_DEBUG) console.error(`kill ${k + 1}/${o.kills} after ${lived} ms, ${inFlight} run(s) in flight`);
    await sleep(r.int(o.downMinMs, o.downMaxMs));
  }
  const killPhaseMs = Date.now() - tKill;

  // ---------------------------------------------------------------- settle
  driving = false;
  await driver;
  const final: DaemonProc = await startReady(home, env, daemonArgs, refusals);
  const settled = await settle(home, o.settleTimeoutS * 1000);
  const stop = await final.term();
  const stoppedCleanly = stop.code === 0 && final.lines.some((l) => l.kind === 'daemon_stopped');
  await sleep(300); // let a sandbox that outlived its daemon show up
  const leaked = processesMentioning(home);
  // They were started by our daemons, for our temp home: end them, by pid, once counted.
  for (const p of leaked) {
    try {
      process.kill(p.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }

  // ---------------------------------------------------------------- check the files
  const checked = check(home, ids, sent);
  const statusRows = settled.rows;
  const result = {
    part: 'kill -9 soak',
    options: o,
    sandbox: sandboxOf(home, ids),
    figures: {
      sessions: ids.length,
      kills: kills.length,
      kills_with_runs_in_flight: kills.filter((k) => k.in_flight > 0).length,
      runs_in_flight_at_kills: kills.reduce((a, k) => a + k.in_flight, 0),
      kills_before_ready: kills.filter((k) => !k.started).length,
      daemon_ready_ms_p50: percentile(kills.flatMap((k) => (k.ready_ms === null ? [] : [k.ready_ms])), 50),
      runs_ended_per_daemon_life_p50: percentile(kills.map((k) => k.runs_ended), 50),
      sessions_unanswered_until_kills_stopped: checked.starved(tKill + killPhaseMs),
      runs_blocked_by_a_dead_holders_lease: checked.figures.blocked_ownerless + checked.figures.blocked_with_owner,
      model_streams_cut_by_kills: server.stats.abortedMidStream,
      model_requests: server.stats.requests,
      model_slow_replies: model.slowReplies,
      model_replies_with_nothing_to_do: model.emptyReplies,
      answers_streamed_again_after_a_kill: [...answerStreams.values()].filter((n) => n > 1).length,
      messages_sent: sent.length,
      messages_sent_by_cli: sent.filter((s) => s.via === 'cli').length,
      messages_appended_by_hand: sent.filter((s) => s.via === 'append').length,
      ...checked.figures,
    },
    invariants: {
      /** A sent tag that never reached the log, was never taken in by a run, or was never answered after it. */
      messages_lost: checked.lost.length,
      /** A tag quoted by more than one final agent.message. */
      answered_twice: checked.answeredTwice.length,
      /** A tag appended to ran.txt more than once: a tool call run a second time. */
      tools_run_twice: checked.ranTwice.length,
      /** A session still `running` (or not idle) after the settle. */
      sessions_left_running: statusRows.filter((x) => x.status === 'running').length,
      sessions_not_idle_after_settle: statusRows.filter((x) => x.status !== 'idle' || (x.pending_events ?? 0) > 0).length,
      /** A user.message carrying a tag that appears more than once in the log. */
      messages_duplicated: checked.duplicated.length,
      /** Lines of events.jsonl that are not JSON objects (a torn or interleaved write). */
      corrupt_log_lines: checked.figures.corrupt_log_lines,
      /** `openboa send` exiting non-zero. */
      sends_failed: sent.filter((s) => s.failed).length,
      /** The daemon exiting without our SIGKILL (other than a refused start). */
      daemon_crashes: crashes.length,
      /** A daemon start refused with exit 4, "another daemon is already running", when none was. */
      daemon_starts_refused: refusals.length,
      /** The final daemon not stopping with exit 0 on SIGTERM. */
      unclean_final_stop: stoppedCleanly ? 0 : 1,
      /** Sandboxes or shells left alive after their daemon died. */
      leaked_processes: leaked.length,
    },
    durations_s: {
      kill_phase: round(killPhaseMs / 1000),
      settle: round(settled.ms / 1000),
      total: round((Date.now() - t0) / 1000),
    },
    examples: {
      lost: checked.lost.slice(0, 5),
      answered_twice: checked.answeredTwice.slice(0, 5),
      ran_twice: checked.ranTwice.slice(0, 5),
      duplicated: checked.duplicated.slice(0, 5),
      crashes: crashes.slice(0, 3),
      refusals: refusals.slice(0, 2),
      leaked: leaked.slice(0, 5),
      not_idle: statusRows.filter((x) => x.status !== 'idle' || (x.pending_events ?? 0) > 0).slice(0, 5),
      sends_failed: sent.filter((s) => s.failed).slice(0, 3),
    },
    home: o.keep ? home : null,
  };
  await server.close();
  if (!o.keep && Object.values(result.invariants).every((v) => v === 0)) fs.rmSync(home, { recursive: true, force: true });
  else result.home = home; // keep the evidence
  return result;
}

/** What runtime/environment.json says about the sandbox the shell ran in. */
function sandboxOf(home: string, ids: string[]): string | null {
  for (const id of ids) {
    try {
      const e = JSON.parse(fs.readFileSync(path.join(sessionDir(home, id), 'runtime', 'environment.json'), 'utf8')) as { isolation?: string };
      if (e.isolation) return e.isolation;
    } catch {
      // not written yet
    }
  }
  return null;
}

/** Reads every session's log and ran.txt and measures the invariants. */
function check(home: string, ids: string[], sent: Sent[]) {
  const lost: Array<{ tag: string; why: string }> = [];
  const answeredTwice: Array<{ tag: string; answers: number }> = [];
  const ranTwice: Array<{ tag: string; times: number }> = [];
  const duplicated: Array<{ tag: string; copies: number }> = [];
  let corrupt = 0;
  let outcomeUnknown = 0;
  let toolCalls = 0;
  let toolCallsForTagTwice = 0;
  let recoveryRuns = 0;
  let runs = 0;
  let ranLines = 0;
  const errorsByCode: Record<string, number> = {};
  let blockedOwnerless = 0;
  let blockedWithOwner = 0;
  const latencies: number[] = [];
  /** When each session's first agent.message was written. */
  const firstAnswer: number[] = [];

  ids.forEach((id, s) => {
    const dir = sessionDir(home, id);
    const log = readLog(path.join(dir, 'events.jsonl'));
    corrupt += log.bad;
    const userByTag = new Map<string, LogLine[]>();
    const answersByTag = new Map<string, LogLine[]>();
    const toolUseByTag = new Map<string, LogLine[]>();
    const processed = new Set<string>();
    const unknownResults = new Set<string>();
    for (const l of log.events) {
      const e = l.event;
      if (e.type === 'user.message') for (const t of new Set(tagsIn(textOf(e.content)))) userByTag.set(t, [...(userByTag.get(t) ?? []), l]);
      if (e.type === 'agent.message') for (const t of new Set(tagsIn(textOf(e.content)))) answersByTag.set(t, [...(answersByTag.get(t) ?? []), l]);
      if (e.type === 'agent.tool_use' && e.name === 'bash') {
        toolCalls += 1;
        for (const t of new Set(tagsIn(String((e.input as { command?: unknown } | undefined)?.command ?? '')))) toolUseByTag.set(t, [...(toolUseByTag.get(t) ?? []), l]);
      }
      if (e.type === 'agent.tool_result' && e.is_error === true && /outcome unknown/.test(textOf(e.content))) unknownResults.add(String(e.tool_use_id));
      if (e.type === 'session.status_running') {
        runs += e.continuation ? 0 : 1;
        if (e.trigger === 'recovery') recoveryRuns += 1;
        for (const p of (e.processed_event_ids as string[] | undefined) ?? []) processed.add(p);
      }
      if (e.type === 'session.error') {
        const code = String((e.error as { code?: unknown } | undefined)?.code ?? 'none');
        errorsByCode[code] = (errorsByCode[code] ?? 0) + 1;
      }
    }
    outcomeUnknown += unknownResults.size;
    // runtime/activations.jsonl: a `blocked` step is a session the daemon could not lease (only dead daemons held leases here).
    const acts = path.join(dir, 'runtime', 'activations.jsonl');
    for (const line of fs.existsSync(acts) ? fs.readFileSync(acts, 'utf8').split('\n') : []) {
      if (!line.includes('"blocked"') || !line.includes('lease_contended')) continue;
      if (/its lease is held by pid/.test(line)) blockedWithOwner += 1;
      else blockedOwnerless += 1;
    }
    const first = log.events.find((l) => l.event.type === 'agent.message');
    firstAnswer.push(first ? Date.parse(String(first.event.created_at)) : Infinity);
    for (const [, uses] of toolUseByTag) if (uses.length > 1) toolCallsForTagTwice += 1;

    // ran.txt: one line per tool call that actually ran.
    const ranFile = path.join(dir, 'workspace', 'ran.txt');
    const ran = fs.existsSync(ranFile) ? fs.readFileSync(ranFile, 'utf8').split('\n').filter(Boolean) : [];
    ranLines += ran.length;
    const ranCount = new Map<string, number>();
    for (const t of ran) ranCount.set(t, (ranCount.get(t) ?? 0) + 1);
    for (const [tag, times] of ranCount) if (times > 1) ranTwice.push({ tag, times });

    for (const x of sent.filter((m) => m.session === s && !m.failed)) {
      const users = userByTag.get(x.tag) ?? [];
      if (users.length > 1) duplicated.push({ tag: x.tag, copies: users.length });
      const u = users[0];
      if (!u) {
        lost.push({ tag: x.tag, why: 'not in events.jsonl' });
        continue;
      }
      if (!processed.has(u.id)) {
        lost.push({ tag: x.tag, why: `line ${u.line} (${u.id}) was never taken in by a session.status_running` });
        continue;
      }
      const answers = (answersByTag.get(x.tag) ?? []).filter((a) => a.line > u.line);
      if (answers.length === 0) {
        lost.push({ tag: x.tag, why: `line ${u.line} was taken in but never answered by an agent.message` });
        continue;
      }
      if (answers.length > 1) answeredTwice.push({ tag: x.tag, answers: answers.length });
      const at = Date.parse(String(answers[0]!.event.created_at));
      if (Number.isFinite(at)) latencies.push(at - x.at);
    }
  });

  return {
    lost,
    answeredTwice,
    ranTwice,
    duplicated,
    /** Sessions whose first answer came only after `t` (the end of the kill phase). */
    starved: (t: number) => firstAnswer.filter((a) => a > t).length,
    figures: {
      runs,
      recovery_runs: recoveryRuns,
      bash_tool_calls: toolCalls,
      bash_calls_run: ranLines,
      tool_calls_outcome_unknown: outcomeUnknown,
      tool_calls_issued_twice_for_a_tag: toolCallsForTagTwice,
      session_errors_by_code: errorsByCode,
      corrupt_log_lines: corrupt,
      blocked_ownerless: blockedOwnerless,
      blocked_with_owner: blockedWithOwner,
      answer_latency_ms: { p50: percentile(latencies, 50), p90: percentile(latencies, 90), p99: percentile(latencies, 99), max: latencies.length ? Math.max(...latencies) : null },
    },
  };
}
