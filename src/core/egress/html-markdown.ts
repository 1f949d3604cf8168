/**
 * HTML turned into Markdown (turndown) off the daemon's thread. A page is
 * whatever its site sends, and turndown's work grows with the square of the
 * nesting depth: 20,000 nested `<div>`s (220 KB) take some 10 s of CPU and
 * deeper ones overflow its stack. On the daemon's own thread one such page
 * would stall every session and no timer could stop it, so each page is
 * converted in a worker thread of its own, with a memory ceiling, and the
 * worker is terminated when the signal aborts.
 *
 * Each conversion may take MAX_HEAP_MB and a core until its deadline, and
 * the page is the agent's to choose (under `network: host` any site, its
 * own included): 5 MiB of `<p>x</p>` holds a worker at its ceiling, some
 * 640 MB of the daemon's RSS, for 16 s. So at most MAX_CONVERSIONS run at
 * once in the process, whatever the number of runs; the others wait their
 * turn under their own signal (a fetch whose deadline passes while it waits
 * gets its HTML as it came, as after a conversion that failed).
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

const TURNDOWN = createRequire(import.meta.url).resolve('turndown');

/** The worker: CommonJS (an eval'd worker is), turndown loaded by its resolved path. */
const WORKER_JS = `
const { parentPort, workerData } = require('node:worker_threads');
const TurndownService = require(workerData.turndown);
const t = new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced', bulletListMarker: '-' });
t.remove(['script', 'style', 'noscript', 'template', 'iframe', 'object', 'embed']);
parentPort.postMessage(t.turndown(workerData.html));
`;

/** A 5 MiB page (web_fetch's cap) parses within this; past it the worker stops with an error. */
const MAX_HEAP_MB = 512;

/**
 * Conversions running at once in this process. Two, not one: a run's tools
 * run one at a time, so one session fetching hostile pages holds one slot
 * and the other sessions' pages (milliseconds each) go through the other.
 */
export const MAX_CONVERSIONS = 2;

let running = 0;
const queue: Array<() => void> = [];

/** How many conversions run and wait now (for tests). */
export function conversions(): { running: number; waiting: number } {
  return { running, waiting: queue.length };
}

/** Waits for a slot (rejects with the signal's reason if it aborts first); the caller must call release() once. */
function slot(signal: AbortSignal): Promise<void> {
  if (running < MAX_CONVERSIONS) {
    running++;
    return Promise.resolve();
  }
  return new Promise((resolve, reject) => {
    const take = () => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    };
    const onAbort = () => {
      queue.splice(queue.indexOf(take), 1);
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    queue.push(take); // release() hands its slot over: `running` stays as it is
  });
}

function release(): void {
  const next = queue.shift();
  if (next) next();
  else running--;
}

/**
 * The Markdown of `html`. Rejects when the conversion fails (too deep, too
 * large) or the signal aborts first, while it waits for its turn or while
 * it runs (with the signal's reason); the worker is gone either way.
 */
export async function htmlToMarkdown(html: string, signal: AbortSignal): Promise<string> {
  if (signal.aborted) throw signal.reason;
  await slot(signal);
  try {
    return await convert(html, signal);
  } finally {
    release();
  }
}

function convert(html: string, signal: AbortSignal): Promise<string> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason);
      return;
    }
    // execArgv []: none of the daemon's node flags (an --input-type=module would make the eval'd code ESM).
    const worker = new Worker(WORKER_JS, { eval: true, execArgv: [], workerData: { html, turndown: TURNDOWN }, resourceLimits: { maxOldGenerationSizeMb: MAX_HEAP_MB }, stdout: true, stderr: true });
    let settled = false;
    const settle = (f: () => void) => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', onAbort);
      // Settled once the worker is gone, so its slot is given back only with its memory.
      worker.terminate().then(f, f);
    };
    const onAbort = () => settle(() => reject(signal.reason));
    signal.addEventListener('abort', onAbort, { once: true });
    worker.once('message', (markdown: string) => settle(() => resolve(markdown)));
    worker.once('error', (e) => settle(() => reject(e)));
    worker.once('exit', (code) => settle(() => reject(new Error(`the converter stopped (exit code ${code})`))));
  });
}
