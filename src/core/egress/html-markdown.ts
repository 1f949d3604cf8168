/**
 * HTML turned into Markdown (turndown) off the daemon's thread. A page is
 * whatever its site sends, and turndown's work grows with the square of the
 * nesting depth: 20,000 nested `<div>`s (220 KB) take some 10 s of CPU and
 * deeper ones overflow its stack. On the daemon's own thread one such page
 * would stall every session and no timer could stop it, so each page is
 * converted in a worker thread of its own, with a memory ceiling, and the
 * worker is terminated when the signal aborts.
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
 * The Markdown of `html`. Rejects when the conversion fails (too deep, too
 * large) or the signal aborts first (with the signal's reason); the worker
 * is gone either way.
 */
export function htmlToMarkdown(html: string, signal: AbortSignal): Promise<string> {
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
      void worker.terminate();
      f();
    };
    const onAbort = () => settle(() => reject(signal.reason));
    signal.addEventListener('abort', onAbort, { once: true });
    worker.once('message', (markdown: string) => settle(() => resolve(markdown)));
    worker.once('error', (e) => settle(() => reject(e)));
    worker.once('exit', (code) => settle(() => reject(new Error(`the converter stopped (exit code ${code})`))));
  });
}
