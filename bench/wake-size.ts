/**
 * Issue 4: a session with 100,000 events wakes within 20 % of the time of a
 * new one. Times wake() in this process (scripted zero-latency model, a plain
 * text reply) on a long-lived session and on a fresh one, alternating, after
 * one warm-up run each (as in a running daemon). Medians over many runs.
 */
import fs from 'node:fs';
import { performance } from 'node:perf_hooks';
import { appendLines } from '../src/core/store/jsonl.js';
import { wake } from '../src/core/run/wake.js';
import { sendMessage } from '../src/core/ops/session-ops.js';
import { systemDeps } from '../src/core/foundation/deps.js';
import { benchHome, conversationLines } from './fixtures.js';
import { runProof } from '../src/core/store/run-key.js';
import { median, round } from './stats.js';

export function fillLongSession(b: ReturnType<typeof benchHome>, id: string, events: number) {
  const p = b.store.paths(id);
  const lines = conversationLines(events - 1, (w) => runProof(b.store.runKey(id), id, w));
  for (let i = 0; i < lines.length; i += 5000) appendLines(p.events, lines.slice(i, i + 5000));
  // close a possibly half-written turn, as a finished run would have
  const lastRun = [...lines].reverse().map((l) => /"type":"session.status_running"[^]*?"wake_id":"(wrun_[0-9a-f]+)"/.exec(l)?.[1]).find(Boolean);
  appendLines(p.events, [JSON.stringify({ id: 'sevt_fill_end', type: 'session.status_idle', created_at: new Date().toISOString(), wake_id: lastRun, stop_reason: { type: 'end_turn' }, stop_details: null })]);
}

export async function benchWakeSize(runs = 60) {
  const b = benchHome();
  try {
    const rt = { home: b.home, store: b.store, deps: systemDeps() };
    const big = b.store.create({ agentId: 'fast', environmentId: 'local' }).id;
    fillLongSession(b, big, 100_000);
    const t0 = performance.now();
    b.store.snapshot(big); // the one-time rebuild of session.json
    const firstFoldMs = performance.now() - t0;
    const small = b.store.create({ agentId: 'fast', environmentId: 'local' }).id;
    const time = async (id: string) => {
      sendMessage(b.store, id, 'and now?');
      const s = performance.now();
      const r = await wake(rt, id);
      if (r.outcome !== 'executed') throw new Error(`expected a run, got ${r.skip_reason}`);
      return performance.now() - s;
    };
    for (let i = 0; i < 5; i++) {
      await time(big);
      await time(small);
    }
    const tb: number[] = [];
    const ts: number[] = [];
    for (let i = 0; i < runs; i++) {
      // alternate the order so drift and GC hit both alike
      if (i % 2) {
        tb.push(await time(big));
        ts.push(await time(small));
      } else {
        ts.push(await time(small));
        tb.push(await time(big));
      }
    }
    return {
      bench: 'wake-size',
      events: { big: 100_000, small: 1 },
      log_mb: round(fs.statSync(b.store.paths(big).events).size / 1e6, 1),
      first_fold_of_big_ms: round(firstFoldMs, 1),
      wake_ms_median: { big: round(median(tb), 2), small: round(median(ts), 2) },
      ratio_big_over_small: round(median(tb) / median(ts), 2),
      target: 'ratio <= 1.2',
    };
  } finally {
    b.cleanup();
  }
}
