/** A hand-written line without created_at gets one time, the first time it is read, for every reader. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { bench } from '../helpers/run.js';
import { viewEvents } from '../../src/core/views/event-view.js';

test('a line without created_at shows the same time to every later read, and the run that takes it in pins it', async (t) => {
  const b = await bench(t, { steps: [{ text: 'ok' }] });
  const id = b.session();
  fs.appendFileSync(b.store.paths(id).events, '{"type":"user.message","content":"no time given"}\n');
  const firstSeen = new Date(b.deps.clock.now()).toISOString();
  const createdAt = () => viewEvents(b.store.readEvents(id).lines).flatMap((v) => ('event' in v && v.event.type === 'user.message' ? [v.event] : []))[0]!;
  assert.equal(createdAt().created_at, firstSeen);
  assert.equal(b.store.snapshot(id).pending_events[0]!.read_at, firstSeen, 'session.json pins it');
  await b.deps.clock.advance(60_000);
  assert.equal(createdAt().created_at, firstSeen, 'a later read shows the same time');
  await b.deps.clock.advance(60_000);
  const r = await b.wake(id);
  assert.equal(r.outcome, 'executed');
  const running = b.events(id).find((e) => e.type === 'session.status_running');
  assert.deepEqual(running?.type === 'session.status_running' && running.created_at_of, { [r.processed_event_ids[0]!]: firstSeen });
  // rebuilt from the log alone, long after: still the same, and not after its processed_at
  fs.rmSync(b.store.paths(id).snapshot);
  await b.deps.clock.advance(3_600_000);
  const e = createdAt();
  assert.equal(e.created_at, firstSeen);
  assert.ok(e.processed_at !== null && e.created_at <= e.processed_at);
});
