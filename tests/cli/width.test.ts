/** Display-column arithmetic for clipped lines and tables (src/cli/width.ts) and the duration grammar (src/cli/flags.ts). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { clipToWidth, table, widthOf } from '../../src/cli/width.js';
import { parseDuration } from '../../src/core/schedule/duration.js';

test('clipToWidth counts display columns and never halves a wide character or an emoji', () => {
  assert.equal(clipToWidth('hello', 5), 'hello');
  assert.equal(clipToWidth('hello world', 6), 'hello…');
  assert.equal(clipToWidth('漢字漢字', 5), '漢字…');
  assert.equal(widthOf(clipToWidth('漢字漢字', 4)), 3, 'a two-column character that would cross the edge is left out');
  assert.equal(clipToWidth('👩‍👩‍👧 family', 3), '👩‍👩‍👧…');
  assert.equal(clipToWidth('anything', 0), '');
});

test('table pads by display width, so wide characters and colour codes keep the columns straight', () => {
  const t = table(['A', 'B'], [['漢字', 'x'], ['\u001b[32mok\u001b[39m', 'y'], ['abcd', 'z']]);
  const lines = t.split('\n');
  assert.deepEqual(lines.map((l) => widthOf(l)), [7, 7, 7, 7]);
  assert.equal(lines[1], '漢字  x');
});

test('a table cell with a line break, a tab or a control character is shown quoted and escaped: it cannot fake a row', () => {
  const forged = 'a\n2026-01-01T00:00:00  restore  MEMORY.md';
  const t = table(['PATH', 'OP'], [[forged, 'write'], ['tab\there "q"', '\u001b[31mred\u001b[39m'], ['bell\u0007\u202e', 'x'], ['plain "q" \\', 'y']]);
  const lines = t.split('\n');
  assert.equal(lines.length, 5, 'one line per row');
  assert.equal(lines[1], `"a\\n2026-01-01T00:00:00  restore  MEMORY.md"  write`);
  assert.equal(lines[2]!.slice(0, widthOf('"tab\\there \\"q\\""')), '"tab\\there \\"q\\""');
  assert.match(lines[2]!, /\u001b\[31mred\u001b\[39m$/, "openboa's own colours are kept");
  assert.match(lines[3]!, /^"bell\\u0007\\u202e"/);
  assert.match(lines[4]!, /^plain "q" \\ /, 'a cell without controls is unchanged');
});

test('parseDuration: compound durations with units; bare numbers are seconds; noise, signs and unknown units are refused', () => {
  assert.equal(parseDuration('1h30m'), 5_400_000);
  assert.equal(parseDuration('1h 30m'), 5_400_000);
  assert.equal(parseDuration('90s'), 90_000);
  assert.equal(parseDuration('2d'), 172_800_000);
  assert.equal(parseDuration('1.5h'), 5_400_000);
  assert.equal(parseDuration('2 weeks'), 1_209_600_000);
  assert.equal(parseDuration('250ms'), 250);
  assert.equal(parseDuration('45'), 45_000);
  assert.equal(parseDuration('0s'), 0);
  for (const bad of ['', 'soon', '10m please', 'in 10m', '-5m', '1h30', '3 fortnights', '1e3s', 'm10']) assert.equal(parseDuration(bad), null, bad);
});
