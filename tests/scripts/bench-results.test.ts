/** The benchmark results file and its comparison (bench/results.ts). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { committedFigures, compareFigures, flatten, formatComparison } from '../../bench/results.js';

test('every numeric figure is kept under its dotted path; text, NaN and infinities are not', () => {
  const f = flatten({ daemon: { append: { p50_ms: 3, p99_ms: 7, target: 'p99 < 50 ms' }, idle: [{ rss_mb: 90 }] }, bad: Number.NaN, inf: Infinity });
  assert.deepEqual(f, { 'daemon.append.p50_ms': 3, 'daemon.append.p99_ms': 7, 'daemon.idle.0.rss_mb': 90 });
});

test('a figure is worse when it moved the wrong way by more than the noise band', () => {
  const rows = compareFigures(
    { 'a.p99_ms': 12, 'b.p99_ms': 10.5, 'c.runs_per_second': 50, 'd.cache_read_share': 0.97, 'e.new_ms': 1 },
    { 'a.p99_ms': 10, 'b.p99_ms': 10, 'c.runs_per_second': 60, 'd.cache_read_share': 0.95, 'f.gone_ms': 2 },
  );
  const by = Object.fromEntries(rows.map((r) => [r.key, r]));
  assert.equal(by['a.p99_ms']!.worse, true, 'a time 20 % longer');
  assert.equal(by['b.p99_ms']!.worse, false, 'within the band');
  assert.equal(by['c.runs_per_second']!.worse, true, 'a rate 17 % lower');
  assert.equal(by['d.cache_read_share']!.worse, false, 'a share that rose');
  assert.equal(by['a.p99_ms']!.ratio, 1.2);
  assert.equal(by['e.new_ms']!.ratio, null);
  assert.equal(by['f.gone_ms']!.now, null);
  const text = formatComparison(rows, 'now.json', 'before.json');
  assert.match(text, /a\.p99_ms\s+12\s+10\s+1\.20\s+worse/);
  assert.match(text, /^2 figure\(s\) worse/m);
});

test("each figure's baseline is the newest committed result that has it", (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'openboa-bench-results-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = (name: string, figures: Record<string, number>) => {
    const p = path.join(dir, name);
    fs.writeFileSync(p, JSON.stringify({ figures }));
    return p;
  };
  const full = file('2026-01-01.json', { 'daemon.p99_ms': 10, 'idle.rss_mb': 200 });
  const idleOnly = file('2026-01-02.json', { 'idle.rss_mb': 97 });
  assert.deepEqual(committedFigures([full, idleOnly]), { 'daemon.p99_ms': 10, 'idle.rss_mb': 97 });
});
