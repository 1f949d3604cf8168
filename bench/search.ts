/**
 * Issue 17 (cross-session search): 10,000 sessions × 50 events (10 agents),
 * written through the store (fsync off) with a Zipf-like vocabulary.
 * - cold rebuild: `openboa reindex` in a fresh process, its time and peak RSS;
 * - search, warm: agent-scoped and home-wide queries of 1–3 words (common
 *   and rare), p50/p99 (target p50 < 50 ms, p99 < 200 ms); and the tool's
 *   whole path (catch up, then query) on an up-to-date index;
 * - freshness through a real daemon: a line appended to a log → its word in
 *   the index (read directly), p50/p99/max (target < 1 s);
 * - the daemon's RSS at 10,000 sessions with the index fed.
 */
import fs from 'node:fs';
import path from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import { benchHome } from './fixtures.js';
import { median, percentile, round } from './stats.js';
import { Home } from '../src/core/foundation/home.js';
import { SessionStore } from '../src/core/store/session-store.js';
import { systemDeps } from '../src/core/foundation/deps.js';
import { runProof } from '../src/core/store/run-key.js';
import { appendLines } from '../src/core/store/jsonl.js';
import { SessionSearch } from '../src/core/search/session-search.js';
import { searchDbFile } from '../src/core/search/search-db.js';

const CLI = path.resolve(import.meta.dirname, '..', 'dist', 'cli', 'main.js');

/** A deterministic generator (mulberry32), so every run indexes the same text. */
function rng(seed: number) {
  return () => {
    seed |= 0;
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SYL = ['ka', 'lo', 'mi', 'ren', 'tu', 'sa', 'vi', 'dor', 'pe', 'qua', 'zim', 'bel', 'no', 'fra', 'gi', 'hu', 'jex', 'wo', 'ly', 'cet'];
/** 20,000 words; word k is drawn with probability ∝ 1/(k+1) (Zipf), as in prose. */
function vocabulary(random: () => number) {
  const words = Array.from({ length: 20_000 }, (_, k) => {
    let w = '';
    let x = k + 1;
    while (x > 0) {
      w += SYL[x % SYL.length];
      x = Math.floor(x / SYL.length);
    }
    return w;
  });
  const cum: number[] = [];
  let sum = 0;
  for (let k = 0; k < words.length; k++) cum.push((sum += 1 / (k + 1)));
  const pick = () => {
    const r = random() * sum;
    let lo = 0;
    let hi = cum.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((cum[mid] as number) < r) lo = mid + 1;
      else hi = mid;
    }
    return words[lo] as string;
  };
  return { words, pick, sentence: (n: number) => Array.from({ length: n }, pick).join(' ') };
}

/** A session's 49 lines after session.created: 5 turns of user message, run, tool round trip, reply, idle (10 lines), the last cut short. */
function turns(count: number, prove: (w: string) => string, v: ReturnType<typeof vocabulary>, random: () => number): string[] {
  const ts = new Date().toISOString();
  const usage = { input_tokens: 900, output_tokens: 30, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
  const out: string[] = [];
  const len = () => 8 + Math.floor(random() * 30);
  for (let k = 1; out.length < count; k++) {
    const wake = `wrun_${(k + 1).toString(16).padStart(32, '0')}`;
    const turn = [
      { id: `sevt_u${k}`, type: 'user.message', created_at: ts, content: [{ type: 'text', text: v.sentence(len()) }] },
      { id: `sevt_r${k}`, type: 'session.status_running', created_at: ts, wake_id: wake, trigger: 'event', processed_event_ids: [`sevt_u${k}`], proof: prove(wake) },
      { id: `sevt_s${k}`, type: 'span.model_request_start', created_at: ts, wake_id: wake },
      { id: `sevt_t${k}`, type: 'agent.tool_use', created_at: ts, wake_id: wake, name: 'read', input: { file_path: '/workspace/notes.md' }, model_tool_use_id: `toolu_${k}`, evaluated_permission: 'allow' },
      { id: `sevt_e${k}`, type: 'span.model_request_end', created_at: ts, wake_id: wake, model_request_start_id: `sevt_s${k}`, is_error: false, model_usage: usage },
      { id: `sevt_o${k}`, type: 'agent.tool_result', created_at: ts, wake_id: wake, tool_use_id: `sevt_t${k}`, content: [{ type: 'text', text: v.sentence(len() * 3) }], is_error: false },
      { id: `sevt_S${k}`, type: 'span.model_request_start', created_at: ts, wake_id: wake },
      { id: `sevt_m${k}`, type: 'agent.message', created_at: ts, wake_id: wake, content: [{ type: 'text', text: v.sentence(len()) }] },
      { id: `sevt_E${k}`, type: 'span.model_request_end', created_at: ts, wake_id: wake, model_request_start_id: `sevt_S${k}`, is_error: false, model_usage: usage },
      { id: `sevt_i${k}`, type: 'session.status_idle', created_at: ts, wake_id: wake, stop_reason: { type: 'end_turn' }, stop_details: null },
    ];
    for (const e of turn) if (out.length < count) out.push(JSON.stringify(e));
  }
  // End idle, so the daemon finds nothing to run: the last turn is whole.
  out.push(JSON.stringify({ id: 'sevt_end', type: 'session.status_idle', created_at: ts, wake_id: 'wrun_' + '6'.padStart(32, '0'), stop_reason: { type: 'end_turn' }, stop_details: null }));
  return out;
}

const AGENTS = 10;

function makeHome(sessions: number) {
  const b = benchHome();
  for (let a = 0; a < AGENTS; a++) fs.cpSync(path.join(b.root, 'agents', 'fast'), path.join(b.root, 'agents', `fast${a}`), { recursive: true });
  const store = new SessionStore(new Home(b.root), systemDeps(), { fsync: 'never' });
  const random = rng(17);
  const v = vocabulary(random);
  const ids: string[] = [];
  for (let i = 0; i < sessions; i++) {
    const s = store.create({ agentId: `fast${i % AGENTS}`, environmentId: 'local', title: `session ${i}: ${v.sentence(3)}` });
    appendLines(store.paths(s.id).events, turns(48, (w) => runProof(store.runKey(s.id), s.id, w), v, random));
    store.snapshot(s.id);
    ids.push(s.id);
  }
  return { b, store, v, random, ids };
}

function rssMb(pid: number): number {
  return round(Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024, 1);
}

function stats(xs: number[]) {
  return { p50: round(median(xs), 2), p99: round(percentile(xs, 99), 2), max: round(Math.max(...xs), 2) };
}

export async function benchSearch(sessions = 10_000) {
  const t0 = performance.now();
  const h = makeHome(sessions);
  const generateS = (performance.now() - t0) / 1000;
  try {
    const lines = h.ids.reduce((n, id) => n + fs.readFileSync(h.store.paths(id).events, 'utf8').split('\n').length - 1, 0);
    // Cold rebuild in a fresh process: its time and its peak RSS (the index is on disk; memory stays bounded).
    const rebuild = spawnSync('/usr/bin/env', ['bash', '-c', `command -v /usr/bin/time >/dev/null && /usr/bin/time -f 'maxrss_kb=%M' node ${CLI} --home ${h.b.root} reindex --json || node ${CLI} --home ${h.b.root} reindex --json`], { encoding: 'utf8' });
    if (rebuild.status !== 0) throw new Error(`reindex failed: ${rebuild.stderr}`);
    const rb = JSON.parse(rebuild.stdout.trim().split('\n').at(-1) as string);
    const maxRss = /maxrss_kb=(\d+)/.exec(rebuild.stderr)?.[1];
    const dbBytes = fs.statSync(searchDbFile(h.b.home)).size;

    // Warm searches, in this process.
    const search = SessionSearch.open(h.store, {});
    const random = rng(99);
    const queries = Array.from({ length: 400 }, (_, i) => {
      const n = 1 + (i % 3);
      // Half drawn like the text (common words), half uniformly from the vocabulary (rare words).
      return Array.from({ length: n }, () => (i % 2 ? h.v.pick() : (h.v.words[Math.floor(random() * h.v.words.length)] as string))).join(' ');
    });
    const time = (fn: (q: string, i: number) => unknown) => {
      for (let i = 0; i < 20; i++) fn(queries[i] as string, i);
      return queries.map((q, i) => {
        const s = performance.now();
        fn(q, i);
        return performance.now() - s;
      });
    };
    let hits = 0;
    const scoped = time((q, i) => (hits += search.search(q, { agentId: `fast${i % AGENTS}`, limit: 10 }).length));
    const home = time((q) => search.search(q, { agentId: null, limit: 10 }));
    const catchUp = (agentId: string | null) =>
      Array.from({ length: 10 }, () => {
        const s = performance.now();
        search.catchUp(agentId);
        return performance.now() - s;
      });
    const catchUpHome = catchUp(null);
    const catchUpAgent = catchUp('fast3');
    search.close();

    // Freshness and RSS through a real daemon.
    const d = spawn(process.execPath, [CLI, '--home', h.b.root, 'daemon', '--json'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    d.stdout.on('data', (x) => (out += x));
    const waitFor = async (re: RegExp, ms: number) => {
      const end = Date.now() + ms;
      while (!re.test(out)) {
        if (Date.now() > end) throw new Error(`daemon: no ${re} within ${ms} ms: ${out.slice(-500)}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    // Timed once the start is over (the discovery scan and the watcher), as bench/daemon.ts does.
    await waitFor(/watcher_ready/, 180_000);
    await waitFor(/daemon_started/, 180_000);
    await new Promise((r) => setTimeout(r, 2000));
    const reader = new Database(searchDbFile(h.b.home), { readonly: true });
    const count = reader.prepare('SELECT count(*) AS n FROM fts WHERE fts MATCH ?');
    const fresh: number[] = [];
    for (let i = 0; i < 60; i++) {
      const id = h.ids[Math.floor(random() * h.ids.length)] as string;
      const word = `freshword${i}x${Math.floor(random() * 1e9)}`;
      const s = performance.now();
      // An agent's reply as a run writes it (not a person's message, so no run starts: this times the indexer alone).
      appendLines(h.store.paths(id).events, [JSON.stringify({ type: 'agent.tool_result', id: `sevt_f${i}`, created_at: new Date().toISOString(), tool_use_id: 'sevt_t1', content: [{ type: 'text', text: `late result ${word}` }], is_error: false })]);
      while ((count.get(`"${word}"`) as { n: number }).n === 0) {
        if (performance.now() - s > 10_000) throw new Error(`${word} not indexed within 10 s`);
        await new Promise((r) => setTimeout(r, 2));
      }
      fresh.push(performance.now() - s);
      await new Promise((r) => setTimeout(r, 20));
    }
    reader.close();
    const daemonRss = rssMb(d.pid as number);
    d.kill('SIGTERM');
    await new Promise((r) => d.on('exit', r));

    return {
      bench: 'search',
      sessions,
      agents: AGENTS,
      log_lines: lines,
      indexed_rows: rb.rows,
      generate_home_s: round(generateS, 1),
      cold_rebuild: { seconds: round(rb.seconds, 1), peak_rss_mb: maxRss ? round(Number(maxRss) / 1024, 1) : null, index_mb: round(dbBytes / 1048576, 1), target: 'report' },
      search_agent_scope_ms: { ...stats(scoped), hits_per_query: round(hits / queries.length, 1), target: 'p50 < 50, p99 < 200' },
      search_home_scope_ms: { ...stats(home), target: 'p50 < 50, p99 < 200' },
      catch_up_when_current_ms: {
        agent_scope: stats(catchUpAgent),
        home_scope: stats(catchUpHome),
        note: "what search_sessions adds before its query: one stat per session of its scope",
      },
      freshness_ms: { ...stats(fresh), samples: fresh.length, target: '< 1000' },
      daemon_rss_mb: { at_sessions: sessions, rss: daemonRss, target: 'report' },
    };
  } finally {
    h.b.cleanup();
  }
}
