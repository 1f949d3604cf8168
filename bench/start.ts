/**
 * Start with 10,000 sessions → the first run begins (issue 26: < 0.5 s).
 *
 * One home of 10,000 idle sessions and one with a message appended while no
 * daemon ran; the daemon (the built CLI) is started `runs` times on it, each
 * time after a new message to that session, and stopped once the run has
 * ended. The session with work is the newest-modified and not in the work
 * index, as after a `send` with no daemon running. The figure is from the
 * spawn to the daemon's `run_start` line, so Node's own start is in it:
 * `node_bare_ms` (`node -e 0`, timed in turn with the starts) says how much.
 */
import fs from 'node:fs';
import { spawnSync } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { benchHome, manySessions } from './fixtures.js';
import { startDaemon } from './daemon.js';
import { median, round } from './stats.js';

export async function benchStart(n = 10_000, runs = 5) {
  const b = benchHome();
  try {
    manySessions(b, n);
    const target = b.store.create({ agentId: 'fast', environmentId: 'local' }).id;
    const first: number[] = [];
    const scan: number[] = [];
    const bare: number[] = [];
    for (let i = 0; i < runs; i++) {
      fs.appendFileSync(b.store.paths(target).events, `${JSON.stringify({ type: 'user.message', content: `start ${i}` })}\n`);
      const t0 = performance.now();
      spawnSync(process.execPath, ['-e', '0']);
      bare.push(performance.now() - t0);
      const start = Date.now();
      const d = startDaemon(b.root);
      const run = await d.waitLine((l) => l.kind === 'run_start' && l.session_id === target, 120_000);
      first.push(Number(run.received_ms) - start);
      const started = await d.waitLine((l) => l.kind === 'daemon_started', 120_000);
      scan.push(Number(started.received_ms) - start);
      await d.waitLine((l) => l.kind === 'run_end' && l.session_id === target, 120_000);
      await d.stop();
    }
    return {
      bench: 'start',
      sessions: n + 1,
      runs,
      first_run_begins_ms: { median: round(median(first), 0), min: round(Math.min(...first), 0), max: round(Math.max(...first), 0) },
      scan_done_ms: { median: round(median(scan), 0) },
      node_bare_ms: { median: round(median(bare), 0) },
      target: 'first_run_begins_ms.median < 500',
    };
  } finally {
    b.cleanup();
  }
}
