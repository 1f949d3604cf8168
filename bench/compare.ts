/**
 * `npm run bench:compare [result.json] [baseline.json]`: each figure of a
 * benchmark result beside the newest committed one, with the ratio (see
 * results.ts). Defaults: the newest result on disk against the newest
 * committed to git. Exits 0 either way: a worse figure is for a person to
 * judge against the machine's noise, not a gate.
 */
import path from 'node:path';
import { compareFigures, formatComparison, lastCommitted, newest, readResults } from './results.js';

const [a, b] = process.argv.slice(2).filter((x) => !x.startsWith('-'));
const nowFile = a ?? newest();
const beforeFile = b ?? lastCommitted();
if (!nowFile) {
  console.error('no benchmark result yet: run `npm run bench` first');
  process.exit(2);
}
if (!beforeFile) {
  console.error('no committed benchmark result to compare with (bench/results/*.json under git)');
  process.exit(2);
}
const now = readResults(nowFile);
const before = readResults(beforeFile);
console.log(formatComparison(compareFigures(now.figures, before.figures), `${path.basename(nowFile)} (load ${now.machine.load1})`, `${path.basename(beforeFile)} (load ${before.machine.load1})`));
