/**
 * `npm run bench [-- name...]`: runs the benchmarks and prints one JSON
 * object per benchmark. Each figure is printed beside its target.
 */
import { benchReadTail } from './read-tail.js';
import { benchDaemon } from './daemon.js';
import { benchWakeSize } from './wake-size.js';
import { benchPromptCache } from './prompt-cache.js';

const ALL: Record<string, () => unknown | Promise<unknown>> = {
  'read-tail': benchReadTail,
  daemon: benchDaemon,
  'wake-size': () => benchWakeSize(),
  'prompt-cache': () => benchPromptCache(),
};

const wanted = process.argv.slice(2).filter((a) => !a.startsWith('-'));
const names = wanted.length ? wanted : Object.keys(ALL);
for (const n of names) {
  const fn = ALL[n];
  if (!fn) {
    console.error(`unknown benchmark "${n}"; known: ${Object.keys(ALL).join(', ')}`);
    process.exit(2);
  }
  console.log(JSON.stringify(await fn(), null, 2));
}
