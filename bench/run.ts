/**
 * `npm run bench [-- name...]`: runs the benchmarks and prints one JSON
 * object per benchmark, each figure beside its target; then writes them all
 * to bench/results/ (results.ts) for `npm run bench:compare`.
 */
import path from 'node:path';
import { writeResults } from './results.js';
import { benchReadTail } from './read-tail.js';
import { benchDaemon, idleFlat } from './daemon.js';
import { benchWakeSize } from './wake-size.js';
import { benchPromptCache } from './prompt-cache.js';
import { benchNeighbour } from './neighbour.js';
import { benchCliStart } from './cli-start.js';
import { benchCompactedWake } from './compacted-wake.js';
import { benchDelegation } from './delegation.js';
import { benchSearch } from './search.js';
import { benchRedact } from './redact.js';
import { benchSpawnCheck } from './spawn-check.js';
import { benchEgress } from './egress.js';
import { benchStart } from './start.js';
import { benchApi } from './api.js';
import { benchTelemetry } from './telemetry.js';
import { benchInspector } from './inspector.js';
import { benchScaleOut } from './scale-out.js';
import { benchInboxPeek } from './inbox-peek.js';

const ALL: Record<string, () => unknown | Promise<unknown>> = {
  'read-tail': benchReadTail,
  daemon: benchDaemon,
  idle: () => idleFlat(),
  'wake-size': () => benchWakeSize(),
  'prompt-cache': () => benchPromptCache(),
  neighbour: () => benchNeighbour(),
  'cli-start': () => benchCliStart(),
  'compacted-wake': () => benchCompactedWake(),
  delegation: () => benchDelegation(),
  search: () => benchSearch(),
  redact: () => benchRedact(),
  'spawn-check': () => benchSpawnCheck(),
  egress: () => benchEgress(),
  start: () => benchStart(),
  api: () => benchApi(),
  telemetry: () => benchTelemetry(),
  inspector: () => benchInspector(),
  'scale-out': () => benchScaleOut(),
  'inbox-peek': () => benchInboxPeek(),
};

const wanted = process.argv.slice(2).filter((a) => !a.startsWith('-'));
/** Run only when named: `idle` idles two minutes (60 s at each size, so the figure includes sweeps); `start` starts a daemon five times on 10,000 sessions; `telemetry` starts 12 daemons (3 paired rounds); `inspector` drives a browser over 10,000 sessions; `scale-out` needs root, FUSE and sshd. */
const ON_REQUEST = new Set(['idle', 'start', 'telemetry', 'inspector', 'scale-out']);
const names = wanted.length ? wanted : Object.keys(ALL).filter((n) => !ON_REQUEST.has(n));
const raw: Record<string, unknown> = {};
for (const n of names) {
  const fn = ALL[n];
  if (!fn) {
    console.error(`unknown benchmark "${n}"; known: ${Object.keys(ALL).join(', ')}`);
    process.exit(2);
  }
  const out = await fn();
  raw[n] = out;
  console.log(JSON.stringify(out, null, 2));
}
console.error(`results: ${path.relative(process.cwd(), writeResults(raw))} (compare: npm run bench:compare)`);
