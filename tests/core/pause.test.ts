/**
 * Pause and resume in-process (docs/context.md, "Pause and resume"): a queued
 * model, the memory sandbox, a manual clock and the real store on a temp home.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { interruptSession, scheduleRevisit, sendMessage } from '../../src/core/ops/session-ops.js';
import { pauseSession, resumeSession } from '../../src/core/ops/pause-ops.js';
import { nextDueMs } from '../../src/core/run/plan.js';
import fs from 'node:fs';
import type { Reply } from '../helpers/queued-model.js';
import { MemorySandbox } from '../../src/core/sandbox/memory-sandbox.js';
import { validateLog } from '../helpers/event-schema.js';
import { unitRun } from '../helpers/unit-run.js';

function setup(t: TestContext, replies: Reply[], onExec?: (cmd: string) => void) {
  const sandbox = new MemorySandbox({ exec: (cmd) => (onExec?.(cmd), `ran: ${cmd}`) });
  const u = unitRun(t, { agents: { unit: { tools: { bash: { permission: 'always_allow' } } } }, replies, sandbox: () => sandbox });
  const id = u.newSession();
  return { h: u.h, model: u.model!, store: u.store, deps: u.deps, rt: u.rt, id, events: () => u.events(id), run: () => u.run(id) };
}

test('a paused session holds a message and due revisits; the resume runs them once, in one run', async (t) => {
  const s = setup(t, [{ text: 'on it' }]);
  const p = pauseSession(s.store, s.id, 'reviewing the plan');
  assert.deepEqual(p.notes, []);
  sendMessage(s.store, s.id, 'go on');
  scheduleRevisit(s.store, s.deps.clock, s.id, { inMs: 1000 }, 'check the build');
  scheduleRevisit(s.store, s.deps.clock, s.id, { inMs: 2000 }, 'check the tests');
  s.deps.clock.advance(5000);

  const snap = s.store.snapshot(s.id);
  assert.equal(snap.paused?.reason, 'reviewing the plan');
  assert.equal(snap.paused?.event_id, p.event.id);
  assert.equal(snap.pending_events.length, 1, 'the pause itself is not pending; the message is');
  assert.equal(nextDueMs(snap), null, 'no timer while paused');

  const skipped = await s.run();
  assert.equal(skipped.outcome, 'skipped');
  assert.equal(skipped.skip_reason, 'paused');
  assert.equal(s.model.requests.length, 0);

  const r = resumeSession(s.store, s.id);
  assert.deepEqual(r.notes, []);
  assert.equal(s.store.snapshot(s.id).paused, null);
  const ran = await s.run();
  assert.equal(ran.outcome, 'executed');
  assert.equal(ran.processed_event_ids.length, 1, 'the message, not the resume');
  assert.equal(ran.wakes_consumed.length, 2, 'both due revisits, coalesced into the one run');
  assert.equal(s.model.requests.length, 1);
  const sent = JSON.stringify(s.model.requests[0]!.messages);
  for (const x of ['go on', 'check the build', 'check the tests']) assert.match(sent, new RegExp(x));
  assert.equal((await s.run()).skip_reason, 'nothing_pending', 'once');
  assert.deepEqual(validateLog(s.store.paths(s.id).events).errors, []);
  // session.json is a cache: rebuilt from the log, it says the same.
  const before = s.store.snapshot(s.id);
  fs.rmSync(s.store.paths(s.id).snapshot);
  assert.deepEqual(s.store.snapshot(s.id), before);
});

test('a run in progress stops at its next step when paused: the tool finishes, no further request; the resume finishes the turn', async (t) => {
  let s: ReturnType<typeof setup> | undefined;
  s = setup(t, [{ tools: [{ name: 'bash', input: { command: 'make' } }] }, { text: 'built' }], (cmd) => {
    if (cmd === 'make') pauseSession(s!.store, s!.id);
  });
  sendMessage(s.store, s.id, 'build it');
  const r = await s.run();
  assert.equal(r.status, 'idle');
  assert.equal(r.stop_reason?.type, 'end_turn');
  assert.equal(r.tool_calls, 1, 'the tool ran to its end');
  assert.equal(s.model.requests.length, 1, 'no request after the pause');
  const evs = s.events();
  const result = evs.find((e) => e.type === 'agent.tool_result');
  assert.ok(result && !result.is_error, 'the tool result is a real one, not an abort');
  const stopped = evs.find((e) => e.type === 'session.run_paused');
  assert.ok(stopped && stopped.type === 'session.run_paused');
  assert.equal(stopped.wake_id, r.wake_id);
  assert.equal(s.store.snapshot(s.id).paused?.cut_run, r.wake_id);
  assert.equal((await s.run()).skip_reason, 'paused');

  // Resumed with nothing else waiting: one run finishes the cut turn (the model sees the tool result).
  const resume = resumeSession(s.store, s.id);
  assert.equal(s.store.snapshot(s.id).pending_events[0]?.id, resume.event.id, 'the resume of a cut turn waits for a run');
  const again = await s.run();
  assert.equal(again.outcome, 'executed');
  assert.deepEqual(again.processed_event_ids, [resume.event.id]);
  assert.equal(s.model.requests.length, 2);
  assert.match(JSON.stringify(s.model.requests[1]!.messages.at(-1)), /ran: make/);
  assert.equal((await s.run()).skip_reason, 'nothing_pending');
  assert.deepEqual(validateLog(s.store.paths(s.id).events).errors, []);
});

test('a paused session still honours an interrupt: revisits cancelled, messages keep waiting, the pause stays', async (t) => {
  const s = setup(t, [{ text: 'hello' }]);
  pauseSession(s.store, s.id);
  sendMessage(s.store, s.id, 'later');
  scheduleRevisit(s.store, s.deps.clock, s.id, { inMs: 0 }, 'a revisit');
  interruptSession(s.store, s.id, 'stop everything');
  const r = await s.run();
  assert.equal(r.outcome, 'executed');
  assert.equal(r.processed_event_ids.length, 1, 'only the interrupt');
  assert.equal(s.model.requests.length, 0);
  const snap = s.store.snapshot(s.id);
  assert.equal(snap.pending_wakes.length, 0);
  assert.equal(snap.wakes_cancelled, 1);
  assert.deepEqual(snap.pending_events.map((p) => p.type), ['user.message']);
  assert.notEqual(snap.paused, null);
  assert.equal((await s.run()).skip_reason, 'paused');
  resumeSession(s.store, s.id);
  assert.equal((await s.run()).processed_event_ids.length, 1);
  assert.equal(s.model.requests.length, 1);
});

test('pausing a paused session and resuming a running one are harmless, and say so', async (t) => {
  const s = setup(t, []);
  const first = pauseSession(s.store, s.id, 'first');
  const second = pauseSession(s.store, s.id, 'second');
  assert.match(second.notes.join('\n'), /already paused .*first.*nothing changed/);
  const snap = s.store.snapshot(s.id);
  assert.equal(snap.paused?.event_id, first.event.id, 'the first pause stands');
  assert.equal(snap.paused?.reason, 'first');
  resumeSession(s.store, s.id);
  const again = resumeSession(s.store, s.id);
  assert.match(again.notes.join('\n'), /was not paused; nothing changed/);
  assert.equal(s.store.snapshot(s.id).paused, null);
  assert.equal(s.store.snapshot(s.id).pending_events.length, 0);
});
