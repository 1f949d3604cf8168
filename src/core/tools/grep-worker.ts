/**
 * grep matches in a worker thread with a deadline: a pattern chosen by the
 * model can backtrack for minutes, and a search over a big workspace takes
 * time; neither may stall the daemon's event loop (the lease refresh, every
 * other session). The worker never touches the file system: the caller
 * reads each file from a descriptor that VirtualFs opened beneath the
 * sandbox's mounts and hands the worker its text.
 */
import { Worker } from 'node:worker_threads';

export const GREP_TIMEOUT_MS = 20_000;

// Plain JavaScript, evaluated in the worker (no TypeScript loader there).
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const re = new RegExp(workerData.pattern);
const maxMatches = workerData.maxMatches;
const lines = [];
let total = 0;
parentPort.on('message', (m) => {
  if (m.end) {
    parentPort.postMessage({ lines, total });
    return;
  }
  const text = m.text.split('\\n');
  for (let i = 0; i < text.length; i++) {
    if (re.test(text[i])) {
      total++;
      if (lines.length < maxMatches) lines.push(m.virtual + ':' + (i + 1) + ':' + text[i]);
    }
  }
});
`;

export type GrepResult = { lines: string[]; total: number } | { error: string };

/**
 * One search: add() each file's text as it is read, then finish(). Ends
 * early (finished = true) on the deadline, an abort or a worker failure;
 * finish() then resolves with the error.
 */
export class GrepSearch {
  private readonly worker: Worker;
  private readonly done: Promise<GrepResult>;
  private settle!: (r: GrepResult) => void;
  private settled = false;
  private readonly timer: NodeJS.Timeout;
  private readonly onAbort: () => void;

  constructor(
    pattern: string,
    private readonly o: { maxMatches: number; timeoutMs: number; signal: AbortSignal },
  ) {
    this.done = new Promise((resolve) => (this.settle = resolve));
    this.worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { pattern, maxMatches: o.maxMatches } });
    this.timer = setTimeout(() => this.end({ error: `grep stopped after ${o.timeoutMs} ms (a pattern that backtracks badly, or too much to search); narrow the pattern or the path` }), o.timeoutMs);
    this.onAbort = () => this.end({ error: 'grep was interrupted' });
    o.signal.addEventListener('abort', this.onAbort, { once: true });
    if (o.signal.aborted) this.onAbort();
    this.worker.on('message', (m: { lines: string[]; total: number }) => this.end(m));
    this.worker.on('error', (e) => this.end({ error: `grep failed: ${e.message}` }));
    this.worker.on('exit', () => this.end({ error: 'grep stopped unexpectedly' }));
  }

  /** True once the search has ended; further add() calls are ignored. */
  get finished(): boolean {
    return this.settled;
  }

  add(virtual: string, text: string): void {
    if (!this.settled) this.worker.postMessage({ virtual, text });
  }

  finish(): Promise<GrepResult> {
    if (!this.settled) this.worker.postMessage({ end: true });
    return this.done;
  }

  private end(r: GrepResult) {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.timer);
    this.o.signal.removeEventListener('abort', this.onAbort);
    void this.worker.terminate();
    this.settle(r);
  }
}

// Tests each path against one regular expression; replies with the indices that match.
const MATCH_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const re = new RegExp(workerData.source, workerData.flags);
const hits = [];
workerData.paths.forEach((p, i) => { if (re.test(p)) hits.push(i); });
parentPort.postMessage(hits);
`;

/**
 * Matches `paths` against a compiled glob (its RegExp source and flags) in a
 * worker with a deadline: a glob the model chooses compiles to a regular
 * expression that can backtrack for minutes on a long file name, which must
 * not stall the daemon's event loop. Resolves with the matching indices.
 */
export function matchPathsOffThread(re: RegExp, paths: readonly string[], o: { timeoutMs: number; signal: AbortSignal }): Promise<{ matched: number[] } | { error: string }> {
  return new Promise((resolve) => {
    const w = new Worker(MATCH_SOURCE, { eval: true, workerData: { source: re.source, flags: re.flags, paths } });
    let done = false;
    const finish = (r: { matched: number[] } | { error: string }) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      o.signal.removeEventListener('abort', onAbort);
      void w.terminate();
      resolve(r);
    };
    const timer = setTimeout(() => finish({ error: `glob stopped after ${o.timeoutMs} ms (a pattern with many wildcards backtracks badly on long names); use fewer * or narrow path` }), o.timeoutMs);
    const onAbort = () => finish({ error: 'glob was interrupted' });
    o.signal.addEventListener('abort', onAbort, { once: true });
    if (o.signal.aborted) onAbort();
    w.on('message', (m: number[]) => finish({ matched: m }));
    w.on('error', (e) => finish({ error: `glob failed: ${e.message}` }));
    w.on('exit', () => finish({ error: 'glob stopped unexpectedly' }));
  });
}
