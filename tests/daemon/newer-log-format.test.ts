/** The daemon leaves a session whose log is of a newer format alone (no run, no line), names it, and runs the others. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { bench } from '../helpers/run.js';
import { startDaemon } from '../helpers/daemon.js';
import { LOG_FORMAT } from '../../src/core/schema/index.js';

test('a session in a newer log format is not run, and does not stop the others', async (t) => {
  const b = await bench(t, { steps: [{ text: 'hello back' }] });
  const newer = b.session('written for a newer openboa');
  const ok = b.session();
  const file = b.store.paths(newer).events;
  const [first, ...rest] = fs.readFileSync(file, 'utf8').split('\n');
  fs.writeFileSync(file, [JSON.stringify({ ...JSON.parse(first!), format: LOG_FORMAT + 1 }), ...rest].join('\n'));
  const before = fs.readFileSync(file, 'utf8');
  const td = await startDaemon(t, b);
  fs.appendFileSync(b.store.paths(ok).events, '{"type":"user.message","content":"hello"}\n');
  await td.result((r) => r.session_id === ok);
  assert.equal(td.d.results.filter((r) => r.session_id === newer).length, 0, 'never run');
  assert.equal(fs.readFileSync(file, 'utf8'), before, 'not a byte written');
  assert.ok(td.lines.some((l) => l.includes(newer) && l.includes(`log format ${LOG_FORMAT + 1}`)), 'the operator log names it');
  // Its pending message makes it look runnable, and each try fails before anything is written: after two
  // tries in a row it is held back like a spinning session, not tried again and again (which would keep
  // the daemon's thread from everything else). Counted in turns of the event loop, not time.
  const held = () => td.lines.some((l) => l.includes(newer) && l.includes('made no progress in 2 runs in a row'));
  for (let turn = 0; turn < 10_000 && !held(); turn++) await nextTurn();
  assert.ok(held(), 'held back after two failed tries');
  const tries = () => td.lines.filter((l) => l.includes(`run of ${newer} failed`)).length;
  const triedBefore = tries();
  for (let turn = 0; turn < 200; turn++) await nextTurn();
  assert.equal(tries(), triedBefore, 'not tried again while held (the manual clock does not move)');
  assert.equal(triedBefore, 2);
});
