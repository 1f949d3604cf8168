/**
 * Pause and resume with the real daemon (docs/context.md, "Pause and
 * resume"): a paused session gets no run and no timer, whatever waits; the
 * resume's line wakes it, and one run takes in what waited.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bench } from '../helpers/run.js';
import { startDaemon } from '../helpers/daemon.js';
import { validateLog } from '../helpers/event-schema.js';
import { pauseSession, resumeSession } from '../../src/core/ops/pause-ops.js';
import { nextDueMs } from '../../src/core/run/plan.js';

test('the daemon does not wake a paused session (message and due revisit waiting), and wakes it once on resume', async (t) => {
  const b = await bench(t, { steps: [{ text: 'control done' }, { text: 'resumed and done' }] });
  const paused = b.session();
  pauseSession(b.store, paused, 'hold on');
  const { sendMessage } = await import('../../src/core/ops/session-ops.js');
  sendMessage(b.store, paused, 'work while paused');
  b.store.scheduleWake(paused, { due_at: new Date(b.deps.clock.now() - 1000).toISOString(), reason: 'overdue revisit', source: 'agent' });
  const control = b.session('a session that is not paused');
  assert.equal(nextDueMs(b.store.snapshot(paused)), null);

  const td = await startDaemon(t, b);
  // The daemon's first scan saw both: the control session ran, the paused one did not.
  await td.result((r) => r.session_id === control && r.outcome === 'executed');
  assert.equal(b.fake.requests.length, 1);
  assert.ok(!td.d.results.some((r) => r.session_id === paused), 'no run, not even a skipped one');
  assert.equal(b.store.snapshot(paused).pending_events.length, 1);
  assert.equal(b.store.snapshot(paused).pending_wakes.length, 1);

  resumeSession(b.store, paused);
  const r = await td.result((x) => x.session_id === paused && x.outcome === 'executed');
  assert.equal(r.processed_event_ids.length, 1, 'the message');
  assert.equal(r.wakes_consumed.length, 1, 'the revisit that came due while paused');
  assert.equal(b.fake.requests.length, 2);
  assert.match(JSON.stringify(b.fake.requests[1]!.body), /work while paused[\s\S]*overdue revisit/);
  await td.until(() => b.store.snapshot(paused).status === 'idle' && b.store.snapshot(paused).pending_wakes.length === 0);
  assert.equal(td.d.results.filter((x) => x.session_id === paused && x.outcome === 'executed').length, 1, 'once');
  assert.deepEqual(validateLog(b.store.paths(paused).events).errors, []);
});
