/** watchTurn: waiting for the turn that takes one event in, read from the log alone. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SessionStore } from '../../src/core/store/session-store.js';
import { createSession } from '../../src/core/ops/create-session.js';
import { sendMessage } from '../../src/core/ops/session-ops.js';
import { watchTurn } from '../../src/core/ops/turn-watch.js';
import { tempHome } from '../helpers/home.js';
import { testDeps } from '../helpers/deps.js';
import { FIRST_RUN } from '../helpers/run-ids.js';

const SECOND_RUN = `wrun_${'0'.repeat(31)}2`;

function setup(t: Parameters<typeof tempHome>[0]) {
  const h = tempHome(t);
  const store = new SessionStore(h.home, testDeps());
  const id = createSession(store, { agent: 'demo' }).id;
  const run = (wakeId: string, taken: string[], end: 'idle' | 'rescheduled') =>
    store.appendEvents(
      id,
      [
        { type: 'session.status_running', wake_id: wakeId, trigger: 'event', processed_event_ids: taken },
        { type: 'agent.message', content: [{ type: 'text', text: `said in ${wakeId}` }] },
        end === 'idle' ? { type: 'session.status_idle', wake_id: wakeId, stop_reason: { type: 'end_turn' }, stop_details: null } : { type: 'session.status_rescheduled', reason: 'x', retry_at: '2030-01-01T00:00:00.000Z' },
      ],
      { wakeId },
    );
  return { store, id, run };
}

test('the wait ends with the idle of the run that took the event in, not an earlier one, and not at a backing-off run', async (t) => {
  const { store, id, run } = setup(t);
  const from = store.snapshot(id).journals.events;
  const msg = sendMessage(store, id, 'hello');
  const seen: string[] = [];
  const waiting = watchTurn(store, id, msg.id, { from, onEvent: (e) => seen.push(e.type) });
  run(FIRST_RUN, [], 'idle'); // an earlier run's end: not this turn's
  run(SECOND_RUN, [msg.id], 'rescheduled'); // took it in, failed: a retry will finish the turn
  const third = `wrun_${'0'.repeat(31)}3`;
  run(third, [], 'idle');
  const end = await waiting;
  assert.equal(end.kind, 'idle');
  assert.equal(end.kind === 'idle' && end.event.wake_id, third);
  assert.equal(seen.filter((x) => x === 'agent.message').length, 3);
  assert.equal(seen[0], 'user.message');
});

test('until: the caller\'s runs are over without the turn ending: settled at once; an abort ends the wait', async (t) => {
  const { store, id } = setup(t);
  const from = store.snapshot(id).journals.events;
  const msg = sendMessage(store, id, 'hello');
  const end = await watchTurn(store, id, msg.id, { from, until: Promise.resolve() });
  assert.deepEqual(end, { kind: 'settled' });
  const stop = new AbortController();
  const waiting = watchTurn(store, id, msg.id, { from, signal: stop.signal });
  stop.abort();
  assert.deepEqual(await waiting, { kind: 'aborted' });
});
