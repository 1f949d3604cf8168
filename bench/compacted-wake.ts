/**
 * Issue 15: a session with a 100,000-event log that was compacted wakes
 * within 20 % of the time of a new session, and a restart (the window read
 * afresh from disk) asks the model for no summary: the compaction record in
 * the log is enough to rebuild the request. Times wake() in this process
 * (scripted zero-latency model), alternating the long and the new session,
 * medians over many runs; the cold figure forgets the cached window before
 * each run, as a restarted daemon starts without one.
 */
import fs from 'node:fs';
import { performance } from 'node:perf_hooks';
import { appendLines } from '../src/core/store/jsonl.js';
import { wake } from '../src/core/run/wake.js';
import { forgetCachedWindows } from '../src/core/run/log-window.js';
import { sendMessage } from '../src/core/ops/session-ops.js';
import { systemDeps } from '../src/core/foundation/deps.js';
import { builtinModels } from '../src/core/model/registry.js';
import { runProof } from '../src/core/store/run-key.js';
import type { ModelProvider } from '../src/core/model/provider.js';
import { benchHome } from './fixtures.js';
import { fillLongSession } from './wake-size.js';
import { median, round } from './stats.js';

/** Appends a compaction, as a run writes one, keeping the last `keepTurns` user turns. */
function appendCompaction(b: ReturnType<typeof benchHome>, id: string) {
  const p = b.store.paths(id);
  const lines = fs.readFileSync(p.events, 'utf8').trimEnd().split('\n');
  // The kept turns start at the status_running that takes in the 20th user message from the end.
  let kept = 0;
  let seen = 0;
  for (let i = lines.length - 1; i >= 0 && !kept; i--) if (lines[i]!.includes('"type":"session.status_running"') && ++seen === 20) kept = i + 1;
  const ts = new Date().toISOString();
  const wakeId = `wrun_${'f'.repeat(8)}${'0'.repeat(24)}`;
  const summary = '## Task Overview\nkeep an eye on the notes\n## Current State\nnothing changed for days\n## Key Discoveries\nnone\n## Next Steps\nlook again tomorrow\n## Context to Preserve\nnone';
  appendLines(p.events, [
    JSON.stringify({ id: 'sevt_c_run', type: 'session.status_running', created_at: ts, wake_id: wakeId, trigger: 'manual', processed_event_ids: [], proof: runProof(b.store.runKey(id), id, wakeId) }),
    JSON.stringify({ id: 'sevt_c', type: 'agent.thread_context_compacted', created_at: ts, wake_id: wakeId, summary_path: '/runtime/summary.md', tokens_before: 150_000, tokens_after: 4000, summary, vital: [], kept_from_line: kept, pruned_before_line: kept, keep_thinking: 2, prune_over: 8192, phases: [0, 1, 2] }),
    JSON.stringify({ id: 'sevt_c_idle', type: 'session.status_idle', created_at: ts, wake_id: wakeId, stop_reason: { type: 'end_turn' }, stop_details: null }),
  ]);
}

export async function benchCompactedWake(runs = 40) {
  const b = benchHome();
  try {
    let summaries = 0;
    const deps = {
      ...systemDeps(),
      models: {
        ...builtinModels,
        scripted: (...a: Parameters<(typeof builtinModels)['scripted']>): ModelProvider => {
          const inner = builtinModels.scripted!(...a);
          return { name: inner.name, complete: (req, signal) => ((summaries += req.tools.length === 0 ? 1 : 0), inner.complete(req, signal)) };
        },
      },
    };
    const rt = { home: b.home, store: b.store, deps };
    const big = b.store.create({ agentId: 'fast', environmentId: 'local' }).id;
    fillLongSession(b, big, 99_997);
    appendCompaction(b, big);
    b.store.snapshot(big);
    if (!b.store.snapshot(big).compaction) throw new Error('the compaction record was not accepted');
    const small = b.store.create({ agentId: 'fast', environmentId: 'local' }).id;
    const time = async (id: string, cold: boolean) => {
      sendMessage(b.store, id, 'and now?');
      if (cold) forgetCachedWindows();
      const s = performance.now();
      const r = await wake(rt, id);
      if (r.outcome !== 'executed') throw new Error(`expected a run, got ${r.skip_reason}`);
      return performance.now() - s;
    };
    for (let i = 0; i < 5; i++) (await time(big, false), await time(small, false));
    const warm = { big: [] as number[], small: [] as number[] };
    const cold = { big: [] as number[], small: [] as number[] };
    // Warm runs first (a running daemon keeps each session's window), then cold ones (every run reads afresh).
    for (const [c, into] of [[false, warm], [true, cold]] as const) {
      for (let i = 0; i < runs; i++) {
        if (i % 2) (into.big.push(await time(big, c)), into.small.push(await time(small, c)));
        else (into.small.push(await time(small, c)), into.big.push(await time(big, c)));
      }
    }
    return {
      bench: 'compacted-wake',
      events: { big: 100_000, small: 1 },
      log_mb: round(fs.statSync(b.store.paths(big).events).size / 1e6, 1),
      wake_ms_median: { big: round(median(warm.big), 2), small: round(median(warm.small), 2) },
      ratio_big_over_small: round(median(warm.big) / median(warm.small), 2),
      restart_wake_ms_median: { big: round(median(cold.big), 2), small: round(median(cold.small), 2) },
      restart_ratio_big_over_small: round(median(cold.big) / median(cold.small), 2),
      summary_requests: summaries,
      target: 'ratio <= 1.2 and restart_ratio <= 1.2; summary_requests == 0',
    };
  } finally {
    b.cleanup();
  }
}
