/**
 * `npm run bench:compare [result.json] [baseline.json]`: each figure of a
 * benchmark result beside the committed ones, with the ratio (see
 * results.ts). Defaults: the newest result on disk against each figure's
 * newest committed value. Exits 0 either way: a worse figure is for a person to
 * judge against the machine's noise, not a gate.
 */
import path from 'node:path';
import { committed, committedFigures, compareFigures, formatComparison, newest, readResults } from './results.js';

const [a, b] = process.argv.slice(2).filter((x) => !x.startsWith('-'));
const nowFile = a ?? newest();
const beforeFiles = b ? [b] : committed();
if (!nowFile) {
  console.error('no benchmark result yet: run `npm run bench` first');
  process.exit(2);
}
if (beforeFiles.length === 0) {
  console.error('no committed benchmark result to compare with (bench/results/*.json under git)');
  process.exit(2);
}
const now = readResults(nowFile);
const before = committedFigures(beforeFiles);
const beforeName = beforeFiles.length === 1 ? path.basename(beforeFiles[0] as string) : `${beforeFiles.length} committed results, newest ${path.basename(beforeFiles.at(-1) as string)}`;
console.log(formatComparison(compareFigures(now.figures, before), `${path.basename(nowFile)} (load ${now.machine.load1})`, beforeName));
