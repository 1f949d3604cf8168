/** Backoff with full jitter: drawn between a floor and a cap that doubles; the draw comes from deps. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { backoffCapMs, backoffMs } from '../../src/core/run/backoff.js';

test('the cap doubles from 2 s to 5 min; the wait is drawn between 250 ms and the cap', () => {
  assert.deepEqual([0, 1, 2, 3, 7, 8, 50].map(backoffCapMs), [2000, 4000, 8000, 16000, 256000, 300000, 300000]);
  assert.equal(backoffMs(0, () => 1), 2000);
  assert.equal(backoffMs(0, () => 0), 250);
  assert.equal(backoffMs(3, () => 0.5), 250 + Math.round((16000 - 250) * 0.5));
  // sessions that failed together spread out
  let seed = 7;
  const rand = () => ((seed = (seed * 48271) % 2147483647) / 2147483647);
  const waits = Array.from({ length: 100 }, () => backoffMs(5, rand));
  assert.ok(new Set(waits).size > 90, 'drawn, not all the same');
  assert.ok(waits.every((w) => w >= 250 && w <= 64000));
});
