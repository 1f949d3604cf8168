/**
 * On a shared home nothing is appended to a session whose lease this
 * process does not hold: what a person or another session writes into it
 * goes through the store's delivery (an inbox/ file, moved in by the run
 * that holds the lease), and a person's write to the wake queue is made
 * under the session's lease (ops/queue-lease.ts). Real files in a temp home.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { SessionStore } from '../../src/core/store/session-store.js';
import { cancelRevisit, scheduleRevisit, sendMessage, updateSession } from '../../src/core/ops/session-ops.js';
import { archiveSession } from '../../src/core/ops/session-lifecycle.js';
import { wake } from '../../src/core/run/wake.js';
import { acquireLease } from '../../src/core/foundation/lease.js';
import { QUEUE_LEASE_POLL_MS, QUEUE_LEASE_WAIT_MS } from '../../src/core/ops/queue-lease.js';
import { OpenboaError } from '../../src/core/foundation/errors.js';
import { unitRun } from '../helpers/unit-run.js';

const inboxFiles = (dir: string) => (fs.existsSync(dir) ? fs.readdirSync(dir).filter((n) => !n.startsWith('.')) : []);
const logSize = (file: string) => fs.statSync(file).size;

test("on a shared home a child's task, its message to its parent and its report reach each log through inbox/", async (t) => {
  const u = unitRun(t, {
    agents: { unit: { delegates: 'self' } },
    replies: [
      { tools: [{ name: 'spawn_session', input: { agent: 'self', message: 'count the files' } }] },
      { text: 'asked a child' },
      { tools: [{ name: 'message_parent', input: { message: 'half way' } }] },
      { text: 'there are 3' },
    ],
  });
  const shared = new SessionStore(u.h.home, u.deps, { shared: true });
  const rt = { home: u.h.home, store: shared, deps: u.deps };
  const parent = u.newSession();
  sendMessage(u.store, parent, 'find out');
  await wake(rt, parent);
  const child = Object.keys(shared.snapshot(parent).children)[0]!;
  assert.ok(child, 'the child was made');
  // The task is in the child's inbox/, not appended to its log.
  assert.deepEqual(u.events(child).map((e) => e.type), ['session.created']);
  assert.equal(inboxFiles(shared.paths(child).inbox).length, 1);

  const parentLog = logSize(shared.paths(parent).events);
  const r = await wake(rt, child);
  assert.equal(r.outcome, 'executed');
  assert.match(JSON.stringify(u.model!.requests[2]!.messages), /count the files/);
  // The child's message and its report: not appended to the parent's log, one inbox/ file each.
  assert.equal(logSize(shared.paths(parent).events), parentLog);
  assert.equal(inboxFiles(shared.paths(parent).inbox).length, 2);
  // The parent's next run moves them in.
  await wake(rt, parent);
  const got = u.events(parent).filter((e) => e.type === 'agent.thread_message_received' || e.type === 'session.thread_status_idle');
  assert.deepEqual(got.map((e) => e.type), ['agent.thread_message_received', 'agent.thread_message_received', 'session.thread_status_idle']);
  assert.equal(shared.snapshot(parent).children[child]?.last_report_run, r.wake_id);
});

test('on a shared home a change of title and an archive go through inbox/', (t) => {
  const u = unitRun(t);
  const shared = new SessionStore(u.h.home, u.deps, { shared: true });
  const id = u.newSession();
  const before = logSize(shared.paths(id).events);
  updateSession(shared, id, { title: 'renamed' });
  archiveSession(shared, id, true);
  assert.equal(logSize(shared.paths(id).events), before);
  assert.equal(inboxFiles(shared.paths(id).inbox).length, 2);
});

test("on a shared home `schedule` and `schedule --cancel` write the queue under the session's lease, waiting for a run to give it back", async (t) => {
  const u = unitRun(t);
  const shared = new SessionStore(u.h.home, u.deps, { shared: true });
  const id = u.newSession();
  const p = shared.paths(id);
  const clock = u.deps.clock;
  const run = await acquireLease(p, { purpose: 'wake', nowIso: new Date(clock.now()).toISOString(), shared: true });
  const queued = scheduleRevisit(shared, clock, id, { inMs: 60_000 }, 'look again');
  await clock.armed(QUEUE_LEASE_POLL_MS);
  assert.equal(fs.readFileSync(p.wakeQueue, 'utf8'), '', 'nothing appended while a run holds the lease');
  await run.release();
  await clock.advance(QUEUE_LEASE_POLL_MS);
  const rec = await queued;
  assert.equal(shared.snapshot(id).pending_wakes[0]?.id, rec.id);
  assert.equal(fs.existsSync(p.lease), false, 'the lease is given back');

  // A run that keeps the lease for the whole wait: busy, and nothing written.
  const run2 = await acquireLease(p, { purpose: 'wake', nowIso: new Date(clock.now()).toISOString(), shared: true });
  t.after(() => run2.release());
  let settled = false;
  const outcome = cancelRevisit(shared, clock, id, rec.id).then(
    () => null,
    (e: unknown) => e,
  ).finally(() => (settled = true));
  const t0 = clock.now();
  while (!settled) {
    await Promise.race([clock.armed(QUEUE_LEASE_POLL_MS), outcome]);
    await clock.advance(QUEUE_LEASE_POLL_MS);
  }
  const e = await outcome;
  assert.ok(clock.now() - t0 >= QUEUE_LEASE_WAIT_MS, 'it waited the whole time');
  assert.ok(OpenboaError.is(e) && e.code === 'busy', `busy, got ${String(e)}`);
  assert.equal(shared.snapshot(id).pending_wakes.length, 1, 'not cancelled');
});
