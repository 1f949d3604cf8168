/**
 * `npm run bench:chaos`: the chaos benchmark. It drives the real daemon (the
 * built CLI, `node dist/cli/main.js daemon`) as a separate process on temp
 * homes and checks, from the files alone, that nothing is lost, repeated or
 * corrupted:
 *
 *  1. soak     kill -9 the daemon at random moments while a driver sends
 *              tagged messages and a scripted model (bench/chaos/model-server.ts)
 *              answers each with a bash call and a final text
 *  2. writers  concurrent `openboa send` processes and inbox writers, with
 *              messages of up to 1 MB
 *  3. symlink  the file tools while another process swaps a workspace
 *              directory with a symlink to a host directory
 *  4. search   agent-scoped searches over agents whose lines share words:
 *              every hit, snippet and title is the hit's own agent's and
 *              event's (bench/chaos/search-scope.ts)
 *  5. secrets  an agent copies a secret, whole and in pieces, into /memory,
 *              file names and a learning; another session reads them back;
 *              the home, the model's requests and the CLI's output must hold
 *              no 16 characters of it
 *  6. memory-swap  an agent's bash swaps a directory and a symlink in its
 *              /memory in a loop while another agent's session is timed,
 *              then makes a huge tree there and its turn is timed
 *  7. bomb     an agent that spawns copies of itself on every task: the
 *              tree limits stop it, and an interrupt of its root stops it
 *              while it grows (bench/chaos/spawn-bomb.ts)
 *  8. egress   an attacker's traffic at a run's egress proxy and web_fetch:
 *              DNS rebinding raced by many requests, request smuggling,
 *              a hostile upstream, slowloris, a deeply nested page
 *              (bench/chaos/egress.ts; in process, no daemon)
 *
 * It prints one JSON object per part, then a short summary, and exits 1 if
 * any invariant is violated (every figure under `invariants` must be 0).
 *
 * Options are flags (`--kills 50`) or environment variables (`CHAOS_KILLS=50`);
 * `--parts soak,writers` runs some parts only. See docs/benchmarks.md ("Chaos").
 */
import os from 'node:os';
import fs from 'node:fs';
import { options, CLI, pinBuild } from './chaos/common.js';
import { soak } from './chaos/soak.js';
import { writers } from './chaos/writers.js';
import { symlinkRace } from './chaos/symlink.js';
import { searchScope } from './chaos/search-scope.js';
import { secretsPart } from './chaos/secrets.js';
import { memorySwap } from './chaos/memory-swap.js';
import { spawnBomb } from './chaos/spawn-bomb.js';
import { egressChaos } from './chaos/egress.js';

const o = options({
  parts: 'soak,writers,search,secrets,memory-swap,bomb,egress,symlink',
  seed: 1,
  // part 1
  sessions: 30,
  kills: 200,
  'kill-min-ms': 300,
  'kill-max-ms': 1500,
  'down-min-ms': 0,
  'down-max-ms': 200,
  'send-interval-ms': 60,
  'max-outstanding': 2,
  'cli-share': 0.25,
  'slow-share': 0.3,
  'sleep-share': 0.5,
  concurrency: 4,
  'settle-timeout-s': 180,
  // part 2
  'send-procs': 8,
  'inbox-writers': 8,
  'messages-per-writer': 20,
  'big-share': 0.2,
  'big-bytes': 1024 * 1024,
  'writer-sessions': 4,
  'writer-kills': 20,
  // part 3
  'symlink-ops': 1000,
  'symlink-ops-per-reply': 20,
  // part 4
  'search-agents': 4,
  'search-sessions': 300,
  'search-queries': 40,
  // part 6
  'memory-swap-seconds': 10,
  'memory-reply-bound-ms': 5000,
  'memory-tree-bound-ms': 6000,
  // part 7
  'bomb-fan-out': 4,
  'bomb-interrupt-at': 150,
  'bomb-chunk-delay-ms': 5,
  // part 8
  'egress-requests': 400,
  'egress-slowloris': 50,
  keep: 0,
});

if (!fs.existsSync(CLI)) {
  console.error(`${CLI} is missing: run \`npm run build\` first (npm run bench:chaos does)`);
  process.exit(2);
}

const parts = String(o.parts).split(',').map((p) => p.trim()).filter(Boolean);
const known = ['soak', 'writers', 'search', 'secrets', 'memory-swap', 'bomb', 'egress', 'symlink'];
for (const p of parts) {
  if (!known.includes(p)) {
    console.error(`unknown part "${p}"; known: ${known.join(', ')}`);
    process.exit(2);
  }
}

// From here on the parts run a private copy of dist/: others may rebuild dist/ meanwhile.
const unpin = await pinBuild();
const machine = { cpus: os.cpus().length, cpu_model: os.cpus()[0]?.model ?? null, memory_gb: Math.round(os.totalmem() / 2 ** 30), node: process.version, platform: `${os.type()} ${os.release()}` };
const results: Array<{ part: string; invariants: Record<string, number>; [k: string]: unknown }> = [];
const t0 = Date.now();
const keep = o.keep === 1;

// The symlink part runs last: it races the file tools, which another change may be rewriting.
try {
  for (const p of known.filter((k) => parts.includes(k))) {
    let r;
    if (p === 'soak') {
      r = await soak({
        seed: o.seed,
        sessions: o.sessions,
        kills: o.kills,
        killMinMs: o['kill-min-ms'],
        killMaxMs: o['kill-max-ms'],
        downMinMs: o['down-min-ms'],
        downMaxMs: o['down-max-ms'],
        sendIntervalMs: o['send-interval-ms'],
        maxOutstanding: o['max-outstanding'],
        cliShare: o['cli-share'],
        slowShare: o['slow-share'],
        sleepShare: o['sleep-share'],
        concurrency: o.concurrency,
        settleTimeoutS: o['settle-timeout-s'],
        keep,
      });
    } else if (p === 'writers') {
      r = await writers({
        seed: o.seed,
        sendProcs: o['send-procs'],
        inboxWriters: o['inbox-writers'],
        messagesPerWriter: o['messages-per-writer'],
        bigShare: o['big-share'],
        bigBytes: o['big-bytes'],
        sessions: o['writer-sessions'],
        kills: o['writer-kills'],
        settleTimeoutS: o['settle-timeout-s'],
        keep,
      });
    } else if (p === 'search') {
      r = await searchScope({ seed: o.seed, agents: o['search-agents'], sessions: o['search-sessions'], queries: o['search-queries'], keep });
    } else if (p === 'memory-swap') {
      r = await memorySwap({ swapSeconds: o['memory-swap-seconds'], replyBoundMs: o['memory-reply-bound-ms'], treeBoundMs: o['memory-tree-bound-ms'], settleTimeoutS: o['settle-timeout-s'], keep });
    } else if (p === 'bomb') {
      r = await spawnBomb({ fanOut: o['bomb-fan-out'], concurrency: o.concurrency, interruptAt: o['bomb-interrupt-at'], chunkDelayMs: o['bomb-chunk-delay-ms'], settleTimeoutS: o['settle-timeout-s'], keep });
    } else if (p === 'egress') {
      r = await egressChaos({ seed: o.seed, requests: o['egress-requests'], slowloris: o['egress-slowloris'], keep });
    } else if (p === 'symlink') {
      r = await symlinkRace({ seed: o.seed, ops: o['symlink-ops'], opsPerReply: o['symlink-ops-per-reply'], settleTimeoutS: o['settle-timeout-s'], keep });
    } else {
      r = await secretsPart({ settleTimeoutS: o['settle-timeout-s'], keep });
    }
    results.push(r);
    console.log(JSON.stringify({ ...r, machine }, null, 2));
  }
} finally {
  unpin();
}

// ---------------------------------------------------------------- summary
const seconds = Math.round((Date.now() - t0) / 1000);
console.log('');
console.log(`chaos: ${parts.join(', ')} in ${seconds} s on ${machine.cpus} core(s), seed ${o.seed}`);
let violated = 0;
for (const r of results) {
  const bad = Object.entries(r.invariants).filter(([, v]) => v !== 0);
  violated += bad.length;
  const all = Object.entries(r.invariants).map(([k, v]) => `${k}=${v}`).join(' ');
  console.log(`  ${bad.length ? 'FAIL' : 'ok  '} ${r.part}: ${all}`);
  if (r.note) console.log(`       note: ${String(r.note)}`);
  if (bad.length && r.home) console.log(`       evidence kept in ${String(r.home)}`);
}
console.log(violated ? `chaos: ${violated} invariant(s) violated` : 'chaos: every invariant held');
process.exit(violated ? 1 : 0);
