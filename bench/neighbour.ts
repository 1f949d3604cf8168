/**
 * A big neighbour must not slow anyone down: append → session.status_running
 * on small sessions of a home where a 100,000-event session lives, against
 * the same home without it (the control). The big session's session.json is
 * absent, as after an upgrade or a deleted cache, so the daemon folds it from
 * scratch at start: the worst case for the neighbours. The appends begin as
 * the daemon is spawned, so the first ones also wait for the process to
 * start; `after_start` counts only those made once its start scan was done.
 * Target: p99 < 50 ms.
 */
import fs from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { benchHome, manySessions } from './fixtures.js';
import { fillLongSession } from './wake-size.js';
import { startDaemon, statusRunningFor } from './daemon.js';
import { median, percentile } from './stats.js';

async function appendLatencyWith(big: boolean, samples: number) {
  const b = benchHome();
  try {
    manySessions(b, 200);
    if (big) {
      const id = b.store.create({ agentId: 'fast', environmentId: 'local' }).id;
      fillLongSession(b, id, 100_000);
      fs.rmSync(b.store.paths(id).snapshot, { force: true });
    }
    const targets = Array.from({ length: 10 }, () => b.store.create({ agentId: 'fast', environmentId: 'local' }).id);
    const d = startDaemon(b.root);
    const t0 = Date.now();
    // The first appends go in at once, while the daemon may still be busy with its start.
    const lat: number[] = [];
    const afterStart: number[] = [];
    for (let i = 0; i < samples; i++) {
      const started = d.lines.some((l) => l.kind === 'daemon_started');
      const target = targets[i % targets.length] as string;
      const id = `sevt_nb_${i}`;
      const at = Date.now();
      fs.appendFileSync(b.store.paths(target).events, `${JSON.stringify({ id, type: 'user.message', content: `ping ${i}` })}\n`);
      await d.waitLine(() => d.lines.filter((x) => x.kind === 'run_end').length > i, 120_000);
      const ran = statusRunningFor(b, target, id);
      if (ran !== null) lat.push(ran - at);
      if (ran !== null && started) afterStart.push(ran - at);
      await sleep(20);
    }
    const elapsed = Date.now() - t0;
    await d.stop();
    return {
      samples: lat.length,
      p50_ms: median(lat),
      p99_ms: percentile(lat, 99),
      max_ms: Math.max(...lat),
      over_ms: elapsed,
      // Appends made once the daemon had finished its start scan (the rest raced the start itself).
      after_start: { samples: afterStart.length, p50_ms: median(afterStart), p99_ms: percentile(afterStart, 99), max_ms: Math.max(...afterStart) },
    };
  } finally {
    b.cleanup();
  }
}

export async function benchNeighbour(samples = 100) {
  return {
    bench: 'neighbour',
    with_100k_event_session: await appendLatencyWith(true, samples),
    control_without_it: await appendLatencyWith(false, samples),
    target: 'p99 < 50 ms with the big session present',
  };
}
