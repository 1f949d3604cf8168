/** openboa wakes agrees with the session: what a run took in is not pending, even before its wake.consumed record. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cliInProcess } from '../helpers/cli.js';
import { tempHome } from '../helpers/home.js';
import { SessionStore } from '../../src/core/store/session-store.js';
import { systemDeps } from '../../src/core/deps.js';
import { FIRST_RUN } from '../helpers/run-ids.js';

test('a revisit a run took in, whose run died before its wake.consumed record, shows as consumed, not due', async (t) => {
  const { root, home } = tempHome(t);
  const id = (await cliInProcess(['session', 'create', '--agent', 'demo'], { home: root })).stdout.trim();
  const store = new SessionStore(home, systemDeps({}));
  const taken = store.scheduleWake(id, { due_at: new Date(Date.now() - 1000).toISOString(), reason: 'taken, then the run died', source: 'agent' });
  const waiting = store.scheduleWake(id, { due_at: new Date(Date.now() + 3_600_000).toISOString(), reason: 'later', source: 'agent' });
  // the run lists the revisit it takes in, then dies before writing wake.consumed
  store.appendEvents(id, [{ type: 'session.status_running', wake_id: FIRST_RUN, trigger: 'wake_queue', processed_event_ids: [], wakes: [{ id: taken.id, reason: taken.reason, due_at: taken.due_at }] }], { wakeId: FIRST_RUN });
  const r = await cliInProcess(['wakes', id, '--json'], { home: root });
  assert.equal(r.code, 0, r.stderr);
  const rows = JSON.parse(r.stdout) as Array<{ id: string; state: string }>;
  assert.deepEqual(rows.map((w) => [w.id, w.state]), [[taken.id, 'consumed'], [waiting.id, 'pending']]);
  const st = JSON.parse((await cliInProcess(['status', id, '--json'], { home: root })).stdout);
  assert.deepEqual(st.pending_wakes.map((w: { id: string }) => w.id), [waiting.id], 'the same answer as the session');
});

test('wakes --json is one array ([] when there are none); schedule --in takes what people write ("5 minutes", "1 hour 30 minutes"); send - --lines reads stdin', async (t) => {
  const { root } = tempHome(t);
  const id = (await cliInProcess(['session', 'create', '--agent', 'demo'], { home: root })).stdout.trim();
  const none = await cliInProcess(['wakes', id, '--json'], { home: root });
  assert.equal(none.code, 0, none.stderr);
  assert.deepEqual(JSON.parse(none.stdout), []);
  for (const [text, ms] of [['5 minutes', 300_000], ['1 hour 30 minutes', 5_400_000]] as const) {
    const r = await cliInProcess(['schedule', id, '--in', text, '--json'], { home: root });
    assert.equal(r.code, 0, r.stderr);
    const rec = JSON.parse(r.stdout);
    const due = Date.parse(rec.due_at) - Date.parse(rec.created_at);
    assert.ok(Math.abs(due - ms) < 1000, `${text}: due ${due} ms after creation`);
  }
  assert.equal(JSON.parse((await cliInProcess(['wakes', id, '--json'], { home: root })).stdout).length, 2);
  const sent = await cliInProcess(['send', id, '-', '--lines'], { home: root, input: 'one\ntwo\n' });
  assert.equal(sent.code, 0, sent.stderr);
  assert.equal(sent.stdout.trim().split('\n').length, 2);
});
