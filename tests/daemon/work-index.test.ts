/** The start order: the work index (derived, rebuildable) first, then newest-modified sessions. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { WorkIndex, discoveryOrder, INDEX_WRITE_DELAY_MS } from '../../src/daemon/work-index.js';
import { tempHome } from '../helpers/home.js';
import { ManualClock } from '../helpers/clock.js';

test('the index is written a moment after it changes, holds only sessions with something to do, and loads soonest first', async (t) => {
  const h = tempHome(t, { bundled: false });
  const clock = new ManualClock();
  const idx = new WorkIndex(h.home, clock);
  idx.note('s-later', 5000);
  idx.note('s-now', 0);
  idx.note('s-idle', 100);
  idx.note('s-idle', null); // nothing to do any more
  assert.equal(fs.existsSync(idx.file), false, 'not written at once');
  await clock.advance(INDEX_WRITE_DELAY_MS);
  assert.deepEqual(JSON.parse(fs.readFileSync(idx.file, 'utf8')), { format: 1, due: { 's-later': 5000, 's-now': 0 } });
  assert.deepEqual(new WorkIndex(h.home, clock).load(), ['s-now', 's-later']);
  // unchanged notes arm nothing
  idx.note('s-now', 0);
  assert.equal(clock.pendingTimers, 0);
});

test('an unreadable or foreign index costs only order', (t) => {
  const h = tempHome(t, { bundled: false });
  const idx = new WorkIndex(h.home, new ManualClock());
  fs.mkdirSync(path.dirname(idx.file), { recursive: true });
  fs.writeFileSync(idx.file, '{"format":1,"due":');
  assert.deepEqual(idx.load(), []);
  fs.writeFileSync(idx.file, JSON.stringify({ format: 9, due: { a: 1 } }));
  assert.deepEqual(idx.load(), []);
});

test('discovery: indexed sessions first (gone ones skipped), then the rest by their log, newest-modified first', (t) => {
  const h = tempHome(t, { bundled: false });
  const dir = h.home.sessionsDir;
  const ids = ['a', 'b', 'c', 'd'];
  const now = Date.now() / 1000;
  ids.forEach((id, i) => {
    fs.mkdirSync(path.join(dir, id), { recursive: true });
    fs.writeFileSync(path.join(dir, id, 'events.jsonl'), '{}\n');
    fs.utimesSync(path.join(dir, id, 'events.jsonl'), now - 100 + i, now - 100 + i); // d newest
  });
  // a message appended to a's log just now makes it the newest of the rest
  fs.appendFileSync(path.join(dir, 'a', 'events.jsonl'), '{}\n');
  // the queue is not looked at (one stat a session): a revisit the daemon scheduled is in the index
  fs.writeFileSync(path.join(dir, 'b', 'wake-queue.jsonl'), '{}\n');
  assert.deepEqual(discoveryOrder(dir, ids, ['c', 'gone']), ['c', 'a', 'd', 'b']);
});
