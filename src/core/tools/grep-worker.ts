/**
 * grep runs in a worker thread with a deadline: a pattern chosen by the model
 * can backtrack for minutes, and a search over a big workspace takes time;
 * neither may stall the daemon's event loop (the lease refresh, every other
 * session). The worker only reads the files it is given; the caller has
 * already confined them to the sandbox's mounts.
 */
import { Worker } from 'node:worker_threads';

export const GREP_TIMEOUT_MS = 20_000;

// Plain JavaScript, evaluated in the worker (no TypeScript loader there).
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const fs = require('node:fs');
const { pattern, files, maxMatches } = workerData;
const re = new RegExp(pattern);
const lines = [];
let total = 0;
for (const f of files) {
  let buf;
  try {
    const fd = fs.openSync(f.host, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
    try {
      if (!fs.fstatSync(fd).isFile()) continue;
      buf = fs.readFileSync(fd);
    } finally { fs.closeSync(fd); }
  } catch { continue; }
  if (buf.subarray(0, 8000).includes(0)) continue;
  const text = buf.toString('utf8').split('\\n');
  for (let i = 0; i < text.length; i++) {
    if (re.test(text[i])) {
      total++;
      if (lines.length < maxMatches) lines.push(f.virtual + ':' + (i + 1) + ':' + text[i]);
    }
  }
}
parentPort.postMessage({ lines, total });
`;

export type GrepResult = { lines: string[]; total: number } | { error: string };

export function grepOffThread(
  pattern: string,
  files: Array<{ host: string; virtual: string }>,
  o: { maxMatches: number; timeoutMs: number; signal: AbortSignal },
): Promise<GrepResult> {
  return new Promise((resolve) => {
    const w = new Worker(WORKER_SOURCE, { eval: true, workerData: { pattern, files, maxMatches: o.maxMatches } });
    let done = false;
    const finish = (r: GrepResult) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      o.signal.removeEventListener('abort', onAbort);
      void w.terminate();
      resolve(r);
    };
    const timer = setTimeout(() => finish({ error: `grep stopped after ${o.timeoutMs} ms (a pattern that backtracks badly, or too much to search); narrow the pattern or the path` }), o.timeoutMs);
    const onAbort = () => finish({ error: 'grep was interrupted' });
    o.signal.addEventListener('abort', onAbort, { once: true });
    w.on('message', (m: { lines: string[]; total: number }) => finish(m));
    w.on('error', (e) => finish({ error: `grep failed: ${e.message}` }));
    w.on('exit', () => finish({ error: 'grep stopped unexpectedly' }));
  });
}
