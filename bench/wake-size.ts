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
import { sendMessage } from '../src/core/session-ops.js';
import { systemDeps } from '../src/core/deps.js';
import { benchHome } from './fixtures.js';
import { median, round } from './stats.js';

export function fillLongSession(b: ReturnType<typeof benchHome>, id: string, events: number) {
  const p = b.store.paths(id);
  const ts = new Date().toISOString();
  const batch: string[] = [];
  let n = 1;
  let k = 0;
  while (n < events) {
    k++;
    const wake = `wrun_old_${k}`;
    const turn = [
      { id: `sevt_u${k}`, type: 'user.message', created_at: ts, content: [{ type: 'text', text: `message ${k}: please look at the notes and tell me what changed since yesterday` }] },
      { id: `sevt_r${k}`, type: 'session.status_running', created_at: ts, wake_id: wake, trigger: 'event', processed_event_ids: [`sevt_u${k}`] },
      { id: `sevt_s${k}`, type: 'span.model_request_start', created_at: ts, wake_id: wake },
      { id: `sevt_t${k}`, type: 'agent.tool_use', created_at: ts, wake_id: wake, name: 'read', input: { file_path: '/workspace/notes.md' }, model_tool_use_id: `toolu_${k}`, evaluated_permission: 'allow' },
      { id: `sevt_e${k}`, type: 'span.model_request_end', created_at: ts, wake_id: wake, model_request_start_id: `sevt_s${k}`, is_error: false, model_usage: { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 } },
      { id: `sevt_o${k}`, type: 'agent.tool_result', created_at: ts, wake_id: wake, tool_use_id: `sevt_t${k}`, content: [{ type: 'text', text: '1\t# Notes\n2\t- nothing new' }], is_error: false },
      { id: `sevt_S${k}`, type: 'span.model_request_start', created_at: ts, wake_id: wake },
      { id: `sevt_m${k}`, type: 'agent.message', created_at: ts, wake_id: wake, content: [{ type: 'text', text: 'Nothing changed since yesterday.' }] },
      { id: `sevt_E${k}`, type: 'span.model_request_end', created_at: ts, wake_id: wake, model_request_start_id: `sevt_S${k}`, is_error: false, model_usage: { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 } },
      { id: `sevt_i${k}`, type: 'session.status_idle', created_at: ts, wake_id: wake, stop_reason: { type: 'end_turn' }, stop_details: null },
    ];
    for (const e of turn) {
      if (n >= events) break;
      batch.push(JSON.stringify(e));
      n++;
    }
    if (batch.length >= 5000) appendLines(p.events, batch.splice(0));
  }
  appendLines(p.events, batch);
  // close a possibly half-written turn, as a finished run would have
  appendLines(p.events, [JSON.stringify({ id: 'sevt_fill_end', type: 'session.status_idle', created_at: ts, wake_id: 'wrun_fill', stop_reason: { type: 'end_turn' }, stop_details: null })]);
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
