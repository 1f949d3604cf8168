/**
 * A lease handed from one host to another over a real network file system
 * (sshfs from an sshd on 127.0.0.1, mounted as hosts a and b). Host b looks
 * at a session (a message waits, a revisit is due) as host a's run of it
 * opens, so its mount caches the journals' sizes as they were; that run
 * takes in the message and consumes the revisit; host b wakes the session
 * at once, while its cache still shows the journals without that run. It
 * must read what host a wrote (session-lease.ts) and find nothing to do:
 * not take the message in again, not fire the revisit again.
 *
 * The mount caches for 5 s here (the docs ask for about 1 s), so that
 * host b's view is surely stale when it takes the lease: the test checks
 * that before it wakes.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { missing, sshfsHome } from '../helpers/sshfs-home.js';
import { writeMultihostHome } from '../helpers/multihost-home.js';
import { Home } from '../../src/core/foundation/home.js';
import { systemDeps } from '../../src/core/foundation/deps.js';
import { SessionStore } from '../../src/core/store/session-store.js';
import { createSession } from '../../src/core/ops/create-session.js';
import { dueWakes } from '../../src/core/store/fold.js';
import { readLines } from '../../src/core/store/jsonl.js';
import { wake } from '../../src/core/run/wake.js';
import type { Runtime } from '../../src/core/run/run-context.js';

const why = missing();

/** A session with a message waiting and, with `revisit`, a revisit due; the ids of both. */
function waitingSession(server: SessionStore, revisit: boolean): { id: string; message: string; wake: string | null } {
  const id = createSession(server, { agent: 'mh' }).id;
  const message = server.appendEvents(id, [{ type: 'user.message', content: [{ type: 'text', text: 'hello' }] }])[0]!.id;
  const wake = revisit ? server.scheduleWake(id, { due_at: new Date(Date.now() - 1000).toISOString(), reason: 'look again', source: 'agent' }).id : null;
  return { id, message, wake };
}

test('over sshfs, a host that takes a lease just after another host’s run reads that run: nothing taken in or fired twice', { skip: why ?? false, timeout: 120_000 }, async (t) => {
  const nfs = await sshfsHome(['a', 'b'], ['dcache_timeout=5']);
  t.after(() => nfs.close());
  const server = writeMultihostHome(nfs.export, { turns: [{ text: 'answered' }], fallback: 'answered' });
  const host = (h: 'a' | 'b'): Runtime => {
    const home = new Home(nfs.mounts[h]!);
    const deps = systemDeps(process.env);
    return { home, deps, store: new SessionStore(home, deps, { shared: true }) };
  };
  const [a, b] = [host('a'), host('b')];
  // A message alone (how host b's daemon reads a session it folded a moment ago: its fold cache), and a message
  // with a revisit (which also reads the queue).
  for (const withRevisit of [false, true]) {
    await t.test(withRevisit ? 'a message and a revisit' : 'a message', async () => {
      const s = waitingSession(server, withRevisit);
      // Host b looks: the message waits and the revisit is due (its mount now caches the journals).
      const seen = b.store.snapshot(s.id, { persist: false });
      assert.deepEqual(seen.pending_events.map((e) => e.id), [s.message]);
      assert.deepEqual(dueWakes(seen, Date.now()).map((w) => w.id), s.wake ? [s.wake] : []);

      // Host a runs it; as its run opens, host b looks again (a daemon polling the session it waits on): its mount
      // caches the journals' sizes as they are before that run's lines.
      const first = await wake(a, s.id, { onStart: () => void b.store.snapshot(s.id, { persist: false }) });
      assert.equal(first.outcome, 'executed');
      assert.deepEqual(first.processed_event_ids, [s.message]);
      assert.deepEqual(first.wakes_consumed, s.wake ? [s.wake] : []);

      // The precondition: host b's mount still shows the log without host a's run, as the store opens it.
      const size = (root: string) => {
        const fd = fs.openSync(`${root}/sessions/${s.id}/events.jsonl`, 'r');
        try {
          return fs.fstatSync(fd).size;
        } finally {
          fs.closeSync(fd);
        }
      };
      assert.ok(size(nfs.mounts.b!) < size(nfs.export), 'host b should still see the log as it was before host a’s run (the mount caches for 5 s)');

      const second = await wake(b, s.id);
      assert.equal(second.outcome, 'skipped', `host b ran the session again (trigger ${second.trigger}, took ${JSON.stringify(second.processed_event_ids)}, consumed ${JSON.stringify(second.wakes_consumed)})`);

      const log = readLines(server.paths(s.id).events).lines.map((l) => JSON.parse(l.text) as Record<string, unknown>);
      assert.equal(log.filter((e) => e.type === 'session.status_running').length, 1, 'one run in the log');
      const queue = readLines(server.paths(s.id).wakeQueue).lines.map((l) => JSON.parse(l.text) as Record<string, unknown>);
      assert.deepEqual(
        queue.filter((w) => w.type === 'wake.consumed').map((w) => w.wake_id),
        s.wake ? [s.wake] : [],
        'the revisit consumed once',
      );
    });
  }
});
