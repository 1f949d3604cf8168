/**
 * Issue 16: a tree of 1 parent and 50 children on the scripted provider
 * completes with every report delivered, and a child's idle reaches the
 * parent's next run fast: the latency from the report's line in the
 * parent's log (written as the child's run ends) to the parent's
 * session.status_running that takes it in, both stamped by the daemon.
 * Target: p50 < 20 ms. A real `openboa daemon` process, `--concurrency 4`.
 */
import fs from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { createSession } from '../src/core/ops/create-session.js';
import { sendMessage } from '../src/core/ops/session-ops.js';
import { benchHome } from './fixtures.js';
import { startDaemon } from './daemon.js';
import { median, percentile, round } from './stats.js';

interface Line {
  id: string;
  type: string;
  created_at: string;
  processed_event_ids?: string[];
  trigger?: string;
}

export async function benchDelegation(children = 50) {
  const b = benchHome();
  try {
    const parent = createSession(b.store, { agent: 'fast', title: 'parent' }).id;
    const kids = Array.from({ length: children }, (_, i) => createSession(b.store, { agent: 'fast', parentSessionId: parent, title: `child ${i}` }).id);
    for (const k of kids) sendMessage(b.store, k, 'do your part');
    const t0 = Date.now();
    const d = startDaemon(b.root, ['--concurrency', '4']);
    const read = (): Line[] =>
      fs
        .readFileSync(b.store.paths(parent).events, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Line);
    // Every report taken in by a run of the parent.
    let lines: Line[] = [];
    for (let waited = 0; waited < 120_000; waited += 25) {
      lines = read();
      const reports = lines.filter((l) => l.type === 'session.thread_status_idle');
      const taken = new Set(lines.flatMap((l) => (l.type === 'session.status_running' ? (l.processed_event_ids ?? []) : [])));
      if (reports.length >= children && reports.every((r) => taken.has(r.id))) break;
      await sleep(25);
    }
    const elapsed = Date.now() - t0;
    await d.stop();
    const reports = lines.filter((l) => l.type === 'session.thread_status_idle');
    const takenAt = new Map<string, number>();
    for (const l of lines) if (l.type === 'session.status_running') for (const id of l.processed_event_ids ?? []) if (!takenAt.has(id)) takenAt.set(id, Date.parse(l.created_at));
    const lat = reports.flatMap((r) => (takenAt.has(r.id) ? [takenAt.get(r.id)! - Date.parse(r.created_at)] : []));
    const parentRuns = lines.filter((l) => l.type === 'session.status_running' && l.trigger === 'child').length;
    return {
      bench: 'delegation',
      children,
      reports_delivered: reports.length,
      reports_taken_in: lat.length,
      parent_runs_on_reports: parentRuns,
      report_to_parent_run_ms: { p50: round(median(lat), 1), p99: round(percentile(lat, 99), 1), max: lat.length ? Math.max(...lat) : null },
      tree_done_ms: elapsed,
      target: 'every report delivered and taken in; p50 < 20 ms',
    };
  } finally {
    b.cleanup();
  }
}
