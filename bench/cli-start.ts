/**
 * How long the built `openboa` takes from process start to exit, cold (a new
 * Node each time, as a person or a script runs it), on a temp home with one
 * session:
 *
 * - `openboa send <id> "text"` (the one-shot send: src/cli/send-lean.ts)
 * - `openboa --version` (the full CLI's parser alone: no core, no zod)
 * - `node -e 0`, the floor: what Node itself costs on this machine now
 *
 * The three run in turn (send, version, bare, send, ...), so a machine that
 * slows down meanwhile slows all three alike. The figure with a target is
 * send against the floor, taken pair by pair (each send over the bare Node
 * started right after it): within 1.6x (issue 26).
 * Needs `npm run build` first (`npm run bench` does it).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { benchHome } from './fixtures.js';
import { median, percentile, round } from './stats.js';

const CLI = path.resolve(import.meta.dirname, '..', 'dist', 'cli', 'main.js');

/** Wall milliseconds of one whole process; throws when it does not exit 0. */
function timeProcess(args: string[], env: NodeJS.ProcessEnv): number {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const ms = performance.now() - t0;
  if (r.status !== 0) throw new Error(`node ${args.join(' ')} exited ${r.status ?? r.signal}: ${String(r.stderr).trim()}`);
  return ms;
}

export function benchCliStart(runs = 20, warmup = 2) {
  if (!fs.existsSync(CLI)) throw new Error(`${CLI} is missing: run npm run build first`);
  const b = benchHome();
  try {
    const id = b.store.create({ agentId: 'fast', environmentId: 'local' }).id;
    const env = { ...process.env };
    delete env.OPENBOA_HOME;
    const commands = {
      send: [CLI, '--home', b.root, 'send', id, 'text'],
      version: [CLI, '--version'],
      bare: ['-e', '0'],
    };
    const ms: Record<keyof typeof commands, number[]> = { send: [], version: [], bare: [] };
    for (let i = 0; i < warmup + runs; i++) {
      for (const [name, args] of Object.entries(commands) as Array<[keyof typeof commands, string[]]>) {
        const t = timeProcess(args, env);
        if (i >= warmup) ms[name].push(t);
      }
    }
    return {
      bench: 'cli-start',
      send_cold_ms: { median: round(median(ms.send), 1), p90: round(percentile(ms.send, 90), 1) },
      version_cold_ms: { median: round(median(ms.version), 1) },
      node_bare_ms: { median: round(median(ms.bare), 1) },
      send_over_node: { median: round(median(ms.send.map((t, i) => t / (ms.bare[i] as number))), 2) },
      runs,
      target: 'send_over_node.median < 1.6',
    };
  } finally {
    b.cleanup();
  }
}
