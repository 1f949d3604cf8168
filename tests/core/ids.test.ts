/** Ids sort by the time they were minted, even within one millisecond and when the clock steps back. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RUN_ID, runIdAfter, systemIds } from '../../src/core/foundation/ids.js';
import { UUID_V7 } from '../../src/core/schema/index.js';

const msOf = (uuid: string) => parseInt(uuid.replaceAll('-', '').slice(0, 12), 16);

test('ids minted in the same millisecond sort strictly increasing, of every kind', () => {
  const at = Date.parse('2026-11-21T10:00:00.000Z');
  const ids = systemIds(() => at);
  const uuids = Array.from({ length: 2000 }, () => ids.uuid());
  for (const u of uuids) assert.match(u, UUID_V7);
  for (let i = 1; i < uuids.length; i++) assert.ok(uuids[i - 1]! < uuids[i]!, `${uuids[i - 1]} < ${uuids[i]}`);
  assert.ok(uuids.every((u) => msOf(u) === at), "the timestamp is the clock's");
  // Event, wake and run ids come from the same counter: interleaved, each kind still increases.
  const runs = Array.from({ length: 50 }, () => [ids.run(), ids.event(), ids.wake()]).map((x) => x[0]!);
  for (const r of runs) assert.match(r, RUN_ID);
  for (let i = 1; i < runs.length; i++) assert.ok(runs[i - 1]! < runs[i]!);
  assert.ok(runs[0]!.slice(5) > uuids.at(-1)!.replaceAll('-', ''));
});

test('a clock that steps back does not make an older-looking id', () => {
  let now = Date.parse('2026-11-21T10:00:00.000Z');
  const ids = systemIds(() => now);
  const before = ids.run();
  now -= 60_000;
  const after = [ids.run(), ids.run()];
  assert.ok(before < after[0]! && after[0]! < after[1]!, 'still increasing');
  assert.equal(runIdAfter(after[0]!, before), after[0], 'no repair needed');
  assert.equal(msOf(after[1]!.slice(5)), now + 60_000, 'kept at the latest millisecond seen');
  now += 120_000; // time moves past it again: ids follow the clock
  assert.equal(msOf(ids.uuid()), now);
});

test('ids a millisecond apart sort by time', () => {
  let now = Date.parse('2026-11-21T10:00:00.000Z');
  const ids = systemIds(() => now);
  const a = ids.event();
  now += 1;
  const b = ids.event();
  assert.ok(a < b);
  assert.equal(msOf(b.slice(5)) - msOf(a.slice(5)), 1);
});
