/**
 * Benchmark results on disk, and their comparison.
 *
 * `npm run bench` writes one file per run to bench/results/
 * (`<utc time>-<commit>.json`): the machine, the commit, and every numeric
 * figure of every benchmark flattened to a dotted key
 * (`daemon.append_to_status_running.p99_ms`), beside the raw objects.
 * `npm run bench:compare [file]` prints each figure of the newest result (or
 * of `file`) next to the same figure in the newest committed result that has it,
 * with the ratio, so a slower change is visible. A figure is better higher
 * when its key says a rate or a share (`per_second`, `share`, `ratio_hits`);
 * otherwise (times, sizes, CPU) lower is better. Figures worse by more than
 * the noise band (10 %) are marked.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';

export const RESULTS_DIR = path.join(import.meta.dirname, 'results');
const NOISE = 0.1;

export interface ResultFile {
  at: string;
  commit: string | null;
  dirty: boolean;
  machine: { cpus: number; model: string; node: string; platform: string; load1: number };
  figures: Record<string, number>;
  raw: Record<string, unknown>;
}

/** Every finite numeric leaf of `v`, keyed by its dotted path (arrays by index). */
export function flatten(v: unknown, prefix = '', out: Record<string, number> = {}): Record<string, number> {
  if (typeof v === 'number') {
    if (Number.isFinite(v)) out[prefix] = v;
  } else if (Array.isArray(v)) {
    v.forEach((x, i) => flatten(x, prefix ? `${prefix}.${i}` : String(i), out));
  } else if (v && typeof v === 'object') {
    for (const [k, x] of Object.entries(v)) flatten(x, prefix ? `${prefix}.${k}` : k, out);
  }
  return out;
}

function git(args: string[]): string | null {
  try {
    return execFileSync('git', args, { cwd: path.join(import.meta.dirname, '..'), encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return null;
  }
}

/** Writes one run's results; returns the file written. */
export function writeResults(raw: Record<string, unknown>): string {
  const commit = git(['rev-parse', '--short=12', 'HEAD']);
  const file: ResultFile = {
    at: new Date().toISOString(),
    commit,
    dirty: (git(['status', '--porcelain', '--', 'src', 'bench']) ?? '') !== '',
    machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model ?? 'unknown', node: process.version, platform: `${os.platform()} ${os.release()}`, load1: Number(os.loadavg()[0]?.toFixed(2)) },
    figures: flatten(raw),
    raw,
  };
  fs.mkdirSync(RESULTS_DIR, { recursive: true });
  const name = `${file.at.replace(/[:.]/g, '-')}-${commit ?? 'nocommit'}.json`;
  const p = path.join(RESULTS_DIR, name);
  fs.writeFileSync(p, `${JSON.stringify(file, null, 2)}\n`);
  return p;
}

export function higherIsBetter(key: string): boolean {
  return /per_second|share|hits|runs_per_s/.test(key);
}

export interface Row {
  key: string;
  now: number | null;
  before: number | null;
  ratio: number | null;
  worse: boolean;
}

/** Each figure of `now` beside `before`: ratio now/before, and whether it is worse by more than the noise band. */
export function compareFigures(now: Record<string, number>, before: Record<string, number>): Row[] {
  const keys = [...new Set([...Object.keys(now), ...Object.keys(before)])].sort();
  return keys.map((key) => {
    const a = now[key] ?? null;
    const b = before[key] ?? null;
    const ratio = a !== null && b !== null && b !== 0 ? a / b : null;
    const worse = ratio !== null && (higherIsBetter(key) ? ratio < 1 - NOISE : ratio > 1 + NOISE);
    return { key, now: a, before: b, ratio, worse };
  });
}

/** The result files committed to git, oldest first (their names start with their time). */
export function committed(): string[] {
  const listed = git(['ls-files', '--', 'bench/results']);
  return (listed ?? '').split('\n').filter((f) => f.endsWith('.json')).sort().map((f) => path.join(import.meta.dirname, '..', f));
}

/**
 * Each figure as the newest committed result that has it says: a run of one
 * benchmark (`npm run bench -- idle`) updates its figures and leaves the
 * others as the last full run left them.
 */
export function committedFigures(files: readonly string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const f of files) Object.assign(out, readResults(f).figures);
  return out;
}

/** The newest result file on disk, or null. */
export function newest(): string | null {
  if (!fs.existsSync(RESULTS_DIR)) return null;
  const names = fs.readdirSync(RESULTS_DIR).filter((f) => f.endsWith('.json')).sort();
  const last = names.at(-1);
  return last ? path.join(RESULTS_DIR, last) : null;
}

export function readResults(p: string): ResultFile {
  return JSON.parse(fs.readFileSync(p, 'utf8')) as ResultFile;
}

/** The comparison as text, one figure per line. */
export function formatComparison(rows: Row[], nowName: string, beforeName: string): string {
  const w = Math.max(...rows.map((r) => r.key.length), 6);
  const num = (x: number | null) => (x === null ? '—' : String(Number(x.toPrecision(4))));
  const lines = [`${'figure'.padEnd(w)}  ${'now'.padStart(10)}  ${'before'.padStart(10)}  ratio`, `now: ${nowName}`, `before: ${beforeName}`, ''];
  for (const r of rows) lines.push(`${r.key.padEnd(w)}  ${num(r.now).padStart(10)}  ${num(r.before).padStart(10)}  ${r.ratio === null ? '' : r.ratio.toFixed(2)}${r.worse ? '  worse' : ''}`);
  const worse = rows.filter((r) => r.worse).length;
  lines.push('', `${worse} figure(s) worse by more than ${NOISE * 100} % (rates and shares: higher is better; everything else: lower)`);
  return lines.join('\n');
}
