/**
 * The host sandbox's matching, in worker threads with a deadline: a grep
 * pattern chosen by the model can backtrack for minutes, and so can the
 * regular expression a glob compiles to, on a long file name; a search over
 * a big workspace takes time. None of it may stall the daemon's event loop
 * (the lease refresh, every other session). The workers never touch the
 * file system: the caller reads each file from a descriptor that VirtualFs
 * opened beneath the sandbox's mounts and hands the worker its text.
 *
 * The deadline is a timer of the injected clock (a real one in production;
 * a test with a manual clock advances it).
 */
import { Worker } from 'node:worker_threads';
import type { Clock } from '../foundation/clock.js';

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

/** What a search found, or why it ended without an answer (the deadline, an abort, a worker failure). */
export type GrepOutcome = { lines: string[]; total: number } | { error: string; timedOut?: true; interrupted?: true };

/**
 * One search: add() each file's text as it is read, then finish(). Ends
 * early (finished = true) on the deadline, an abort or a worker failure;
 * finish() then resolves with the error.
 */
export class GrepSearch {
  private readonly worker: Worker;
  private readonly done: Promise<GrepOutcome>;
  private settle!: (r: GrepOutcome) => void;
  private settled = false;
  private readonly cancelTimer: () => void;
  private readonly onAbort: () => void;

  constructor(
    pattern: string,
    private readonly o: { maxMatches: number; timeoutMs: number; signal: AbortSignal; clock: Pick<Clock, 'setTimer'> },
  ) {
    this.done = new Promise((resolve) => (this.settle = resolve));
    this.worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { pattern, maxMatches: o.maxMatches } });
    this.cancelTimer = o.clock.setTimer(o.timeoutMs, () => this.end({ error: `grep stopped after ${o.timeoutMs} ms (a pattern that backtracks badly, or too much to search); narrow the pattern or the path`, timedOut: true }));
    this.onAbort = () => this.end({ error: 'grep was interrupted', interrupted: true });
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

  finish(): Promise<GrepOutcome> {
    if (!this.settled) this.worker.postMessage({ end: true });
    return this.done;
  }

  private end(r: GrepOutcome) {
    if (this.settled) return;
    this.settled = true;
    this.cancelTimer();
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

/** The indices of the paths that matched, or why matching ended without an answer. */
export type MatchOutcome = { matched: number[] } | { error: string; timedOut?: true; interrupted?: true };

/**
 * Matches `paths` against a compiled glob (its RegExp source and flags) in a
 * worker with a deadline: a glob the model chooses compiles to a regular
 * expression that can backtrack for minutes on a long file name, which must
 * not stall the daemon's event loop. Resolves with the matching indices.
 */
export function matchPathsOffThread(re: RegExp, paths: readonly string[], o: { timeoutMs: number; signal: AbortSignal; clock: Pick<Clock, 'setTimer'> }): Promise<MatchOutcome> {
  return new Promise((resolve) => {
    const w = new Worker(MATCH_SOURCE, { eval: true, workerData: { source: re.source, flags: re.flags, paths } });
    let done = false;
    let cancelTimer = () => {};
    const finish = (r: MatchOutcome) => {
      if (done) return;
      done = true;
      cancelTimer();
      o.signal.removeEventListener('abort', onAbort);
      void w.terminate();
      resolve(r);
    };
    cancelTimer = o.clock.setTimer(o.timeoutMs, () => finish({ error: `glob stopped after ${o.timeoutMs} ms (a pattern with many wildcards backtracks badly on long names); use fewer * or narrow path`, timedOut: true }));
    const onAbort = () => finish({ error: 'glob was interrupted', interrupted: true });
    o.signal.addEventListener('abort', onAbort, { once: true });
    if (o.signal.aborted) onAbort();
    w.on('message', (m: number[]) => finish({ matched: m }));
    w.on('error', (e) => finish({ error: `glob failed: ${e.message}` }));
    w.on('exit', () => finish({ error: 'glob stopped unexpectedly' }));
  });
}
