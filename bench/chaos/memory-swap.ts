/**
 * Part 4, an agent swapping in its /memory. A real `openboa daemon` runs two
 * agents on the scripted model server. The `swapper` agent's bash, inside
 * its sandbox, swaps a directory and a symlink in /memory in a tight loop
 * (renameat2 RENAME_EXCHANGE through python3's ctypes, as issue 25 filed
 * it): first in the foreground for `swapSeconds` (the bash call itself
 * loops), then in the background for as long again while the model makes a
 * bash call a second (each turn is followed by a memory scan of the tree
 * being swapped). Meanwhile a driver sends the `chatter` agent's session
 * one message at a time and times each reply. Then the swapper's bash makes
 * 10,050 files, a 30 MB file and a path 80 levels deep in /memory, and the
 * part times how long the turn is held after the bash call ended (the
 * memory scan before the next model request).
 *
 * Invariants: every chatter reply arrives, their p99 is under
 * `replyBoundMs`; both swapping bash calls return; the tree's turn is held
 * less than `treeBoundMs`; the swapping really ran; everything settles.
 */
import fs from 'node:fs';
import path from 'node:path';
import { createSession, percentile, readLog, round, sessionDir, settle, sleep, startReady, tempHome, textOf, writeFile } from './common.js';
import { factsOf, startModelServer, type Reply, type RequestBody } from './model-server.js';

export interface MemorySwapOptions {
  /** How long each swapping loop runs (the foreground one, then the background one). */
  swapSeconds: number;
  /** A chatter reply slower than this (p99) is a violation. */
  replyBoundMs: number;
  /** The tree's turn held longer than this is a violation. */
  treeBoundMs: number;
  settleTimeoutS: number;
  keep: boolean;
}

/**
 * The racer, run by the agent's bash in /memory: swaps argv[1] and argv[2]
 * for argv[3] seconds, writes `<mode> <swaps>` to argv[4] at the end, and
 * creates argv[4].started after its first swap.
 */
const RACER = String.raw`
import ctypes, os, sys, time
a, b, secs, out = sys.argv[1].encode(), sys.argv[2].encode(), float(sys.argv[3]), sys.argv[4]
mode = 'renameat2'
try:
    libc = ctypes.CDLL(None, use_errno=True)
    ex = libc.renameat2
    ex.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    if ex(-100, a, -100, b, 2) != 0:
        raise OSError(ctypes.get_errno(), 'renameat2')
except (AttributeError, OSError):
    mode = 'rename'
    def ex(_x, a, _y, b, _f):
        try:
            os.rename(a, b'swap-tmp'); os.rename(b, a); os.rename(b'swap-tmp', b)
        except OSError:
            pass
open(out + '.started', 'w').close()
end = time.monotonic() + secs
n = 0
while time.monotonic() < end:
    for _ in range(500):
        ex(-100, a, -100, b, 2)
    n += 500
with open(out, 'w') as f:
    f.write('%s %d\n' % (mode, n))
`;
const RACER_B64 = Buffer.from(RACER).toString('base64');
const racer = (seconds: number, out: string) => `python3 -c "$(echo ${RACER_B64} | base64 -d)" rd rd_alt ${seconds} ${out}`;

const SETUP = 'cd /memory && mkdir -p rd && echo a note > rd/note.md && ln -sfn /etc rd_alt';
/** Made by the last bash call: 10,050 files, a 30 MB file and a path 80 levels deep; prints when it ended (ms). */
const TREE = [
  'cd /memory && mkdir -p tree && cd tree',
  'for d in 0 1 2 3 4 5 6 7 8 9; do mkdir -p d$d; for i in $(seq 1 1005); do echo "file $d $i" > d$d/f$i.md; done; done',
  'head -c 30000000 /dev/zero > big.bin',
  `mkdir -p ${'a/'.repeat(80)} && echo deep > ${'a/'.repeat(80)}deep.md`,
  'echo tree-end $(date +%s%3N)',
].join('; ');

const PING_RE = /\bping-\d+\b/g;

export async function memorySwap(o: MemorySwapOptions) {
  const t0 = Date.now();
  const ticks = Math.max(1, Math.round(o.swapSeconds));
  let treeEndSeen: number | null = null;
  let treeNextRequestAt: number | null = null;

  // ---------------------------------------------------------------- the scripted model: the swapper's steps, the chatter's pongs
  const swapperSteps = (tag: string): string[] =>
    tag === 'swap-go'
      ? [
          `${SETUP} && ${racer(o.swapSeconds, '/workspace/racer-fg.out')}; echo foreground swapping ended`,
          `cd /memory && (${racer(o.swapSeconds, '/workspace/racer-bg.out')} >/dev/null 2>&1 &); sleep 0.5; echo background swapping started`,
          ...Array.from({ length: ticks }, (_, i) => `sleep 1; ls /memory | wc -l; echo tick ${i}`),
        ]
      : [TREE];
  const decide = (body: RequestBody): Reply => {
    const f = factsOf(body);
    if (body.model === 'chaos-chatter') {
      const asked = [...new Set(f.userTexts.flatMap((t) => t.match(PING_RE) ?? []))];
      const answered = new Set(f.assistantTexts.flatMap((t) => t.match(PING_RE) ?? []));
      const open = asked.filter((t) => !answered.has(t));
      return { text: open.length ? `pong ${open.join(' ')}` : 'nothing to do' };
    }
    // The swapper: the last tag asked, the bash calls issued since, the next step or the final text.
    const tag = [...f.userTexts].reverse().find((t) => /\b(swap|tree)-go\b/.test(t))?.match(/\b(swap|tree)-go\b/)?.[0];
    if (!tag) return { text: 'nothing to do' };
    const steps = swapperSteps(tag);
    const issued = f.toolUses.filter((u) => steps.includes(String(u.input.command ?? ''))).length;
    if (tag === 'tree-go' && issued === 1 && treeNextRequestAt === null) {
      const result = [...f.toolResults.values()].map((r) => r.text).find((t) => t.includes('tree-end'));
      const end = Number(/tree-end (\d+)/.exec(result ?? '')?.[1]);
      if (Number.isFinite(end)) {
        treeEndSeen = end;
        treeNextRequestAt = Date.now();
      }
    }
    if (issued < steps.length) return { toolUses: [{ name: 'bash', input: { command: steps[issued] as string } }] };
    return { text: `done ${tag}` };
  };
  const server = await startModelServer(decide);

  // ---------------------------------------------------------------- the home: two agents, one session each
  const home = tempHome('memory-swap');
  const agent = (model: string, what: string) => ['description: ' + what, 'provider: anthropic', `model: ${model}`, 'environment: local', 'limits:', '  max_model_requests_per_wake: 1000', ''].join('\n');
  writeFile(home, 'agents/swapper/agent.yaml', agent('chaos-swapper', 'swaps a directory and a symlink in its /memory in a loop'));
  writeFile(home, 'agents/chatter/agent.yaml', agent('chaos-chatter', 'answers pings'));
  const env = { ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: 'chaos-not-a-key', ANTHROPIC_AUTH_TOKEN: undefined };
  const swapper = await createSession(home, 'swapper');
  const chatter = await createSession(home, 'chatter');
  const swapperLog = path.join(sessionDir(home, swapper), 'events.jsonl');
  const chatterLog = path.join(sessionDir(home, chatter), 'events.jsonl');
  const ws = path.join(sessionDir(home, swapper), 'workspace');
  const send = (log: string, text: string) => fs.appendFileSync(log, `${JSON.stringify({ type: 'user.message', content: text })}\n`);
  const agentTexts = (log: string) =>
    readLog(log)
      .events.filter((l) => l.event.type === 'agent.message')
      .map((l) => textOf(l.event.content));

  const daemon = await startReady(home, env, [], []);

  // ---------------------------------------------------------------- the chatter: one ping at a time, each reply timed
  let pings = 0;
  const latencies: Array<{ ms: number; during: boolean }> = [];
  let missing = 0;
  const ping = async (during: () => boolean) => {
    const tag = `ping-${++pings}`;
    const sent = Date.now();
    const wasDuring = during();
    send(chatterLog, `please answer ${tag}`);
    for (;;) {
      if (agentTexts(chatterLog).some((t) => t.startsWith('pong ') && (t.match(PING_RE) ?? ([] as string[])).includes(tag))) {
        latencies.push({ ms: Date.now() - sent, during: wasDuring });
        return;
      }
      if (Date.now() - sent > 60_000) {
        missing += 1;
        return;
      }
      await sleep(25);
    }
  };
  for (let i = 0; i < 3; i++) await ping(() => false); // before any swapping: the baseline

  // ---------------------------------------------------------------- the swapping, and the pings meanwhile
  const started = (f: string) => fs.existsSync(path.join(ws, `${f}.started`));
  const ended = (f: string) => fs.existsSync(path.join(ws, f));
  send(swapperLog, 'please run swap-go');
  const tWait = Date.now();
  while (!started('racer-fg.out') && Date.now() - tWait < 60_000) await sleep(50);
  const tSwap = Date.now();
  const swapping = () => (started('racer-fg.out') && !ended('racer-fg.out')) || (started('racer-bg.out') && !ended('racer-bg.out'));
  const limit = tSwap + 2 * o.swapSeconds * 1000 + 60_000;
  while (started('racer-fg.out') && !(ended('racer-fg.out') && ended('racer-bg.out')) && Date.now() < limit) {
    await ping(swapping);
    await sleep(200);
  }
  const swapMs = Date.now() - tSwap;
  const swapDone = (await waitFor(() => agentTexts(swapperLog).some((t) => t.includes('done swap-go')), 120_000)) ? 1 : 0;

  // ---------------------------------------------------------------- the tree: how long the turn after the bash call is held
  send(swapperLog, 'please run tree-go');
  const treeDone = await waitFor(() => agentTexts(swapperLog).some((t) => t.includes('done tree-go')), 300_000);
  const treeHeldMs = treeEndSeen !== null && treeNextRequestAt !== null ? treeNextRequestAt - treeEndSeen : null;

  const settled = await settle(home, o.settleTimeoutS * 1000);
  await daemon.term();
  await server.close();

  // ---------------------------------------------------------------- count
  const slog = readLog(swapperLog);
  const uses = new Map<string, { command: string; at: number }>();
  for (const l of slog.events) if (l.event.type === 'agent.tool_use') uses.set(l.id, { command: String((l.event.input as { command?: unknown } | undefined)?.command ?? ''), at: Date.parse(String(l.event.created_at)) });
  const bashMs = (prefix: string) => {
    for (const l of slog.events) {
      if (l.event.type !== 'agent.tool_result') continue;
      const u = uses.get(String(l.event.tool_use_id));
      if (u?.command.startsWith(prefix)) return { ms: Date.parse(String(l.event.created_at)) - u.at, error: l.event.is_error === true, text: textOf(l.event.content).slice(-200) };
    }
    return null;
  };
  const fg = bashMs(SETUP);
  const readRacer = (f: string) => {
    try {
      const [mode, n] = fs.readFileSync(path.join(ws, f), 'utf8').trim().split(' ');
      return { mode: mode ?? '?', swaps: Number(n) };
    } catch {
      return { mode: 'did not run', swaps: 0 };
    }
  };
  const rfg = readRacer('racer-fg.out');
  const rbg = readRacer('racer-bg.out');
  const during = latencies.filter((l) => l.during).map((l) => l.ms);
  /** Before the swapping, and between the two loops. */
  const outside = latencies.filter((l) => !l.during).map((l) => l.ms);
  const p99 = percentile(during, 99);
  const memLog = path.join(home, 'agents', 'swapper', 'memory.log.jsonl');
  const memLines = fs.existsSync(memLog) ? fs.readFileSync(memLog, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as { op: string; message?: string }) : [];
  const markers = [...new Set(memLines.filter((l) => l.op === 'scan_incomplete').map((l) => String(l.message).split(':')[0]))];

  const result = {
    part: 'memory swap',
    options: o,
    note: rfg.mode === 'renameat2' ? null : `the racer used ${rfg.mode} (not renameat2 RENAME_EXCHANGE)`,
    figures: {
      racer: rfg.mode,
      swaps_foreground: rfg.swaps,
      swaps_background: rbg.swaps,
      pings_outside_swapping: outside.length,
      pings_while_swapping: during.length,
      reply_ms_outside_swapping: { p50: percentile(outside, 50), max: outside.length ? Math.max(...outside) : null },
      reply_ms_while_swapping: { p50: percentile(during, 50), p99, max: during.length ? Math.max(...during) : null },
      swapping_bash_call_ms: fg?.ms ?? null,
      tree_turn_held_ms: treeHeldMs,
      memory_log_lines: memLines.length,
      scan_incomplete_reasons: markers,
    },
    invariants: {
      /** A chatter message that got no reply within 60 s. */
      replies_missing: missing,
      /** The chatter's replies while the other agent swapped: p99 over the bound. */
      reply_p99_over_bound: p99 !== null && p99 <= o.replyBoundMs ? 0 : 1,
      /** The swapping bash call did not return (or returned an error), or the session's run did not end. */
      swapping_bash_not_returned: fg && !fg.error && swapDone ? 0 : 1,
      /** The turn after the tree's bash call was held longer than the bound (or was not seen). */
      tree_turn_held_over_bound: treeDone && treeHeldMs !== null && treeHeldMs <= o.treeBoundMs ? 0 : 1,
      /** The swapping must really run, both loops, with a ping meanwhile (how many fit in is the daemon's doing, not this). */
      swap_not_exercised: rfg.swaps > 0 && rbg.swaps > 0 && during.length >= 1 ? 0 : 1,
      not_settled: settled.settled ? 0 : 1,
    },
    durations_s: { swapping: round(swapMs / 1000), total: round((Date.now() - t0) / 1000) },
    home: null as string | null,
  };
  if (!o.keep && Object.values(result.invariants).every((v) => v === 0)) fs.rmSync(home, { recursive: true, force: true });
  else result.home = home;
  return result;
}

async function waitFor(cond: () => boolean, ms: number): Promise<boolean> {
  const t0 = Date.now();
  while (!cond()) {
    if (Date.now() - t0 > ms) return false;
    await sleep(100);
  }
  return true;
}
