/**
 * On a shared home the search index and the webhook deliveries are kept by
 * one daemon, shard 0's (docs/daemon.md, "Limits"): a daemon of any other
 * shard opens no index and records no subscription, at its start or after a
 * run. Both are made synchronously when a daemon starts keeping them, so
 * the files tell at once.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { Daemon } from '../../src/daemon/daemon.js';
import { shardOf, type Shard } from '../../src/daemon/shard.js';
import { SessionStore } from '../../src/core/store/session-store.js';
import { createSession } from '../../src/core/ops/create-session.js';
import { sendMessage } from '../../src/core/ops/session-ops.js';
import { searchDbFile } from '../../src/core/search/search-db.js';
import { deliveryJournalFile } from '../../src/core/webhooks/delivery-journal.js';
import type { WakeResult } from '../../src/core/run/wake-api.js';
import { unitRun } from '../helpers/unit-run.js';
import { beforeHomeRemoved } from '../helpers/home.js';

async function daemonOf(t: TestContext, shard: Shard) {
  const u = unitRun(t, { replies: [{ text: 'answered' }] });
  u.h.write('openboa.yaml', 'shared: true\nwebhooks:\n  - name: ops\n    url: http://127.0.0.1:9/hook\n    events: [session.status_idle]\n    secret: { secret: { env: WEBHOOK_SECRET } }\n');
  const deps = { ...u.deps, env: { WEBHOOK_SECRET: 'hook-secret' } };
  const store = new SessionStore(u.h.home, deps);
  assert.equal(store.shared, true);
  const rt = { home: u.h.home, store, deps };
  const d = new Daemon(rt, { concurrency: 1, poll: false, sweepMs: 30_000, json: true, write: () => undefined, shard });
  beforeHomeRemoved(t, () => d.stop());
  t.after(() => d.stop());
  await d.start();
  const kept = () => ({ index: fs.existsSync(searchDbFile(u.h.home)), webhooks: fs.existsSync(deliveryJournalFile(u.h.home)) });
  const atStart = kept();
  // A run of one of this shard's sessions: its changes are hinted to the search feed and the webhooks.
  let id = '';
  do id = createSession(store, { agent: 'unit' }).id;
  while (shardOf(id, shard.count) !== shard.index);
  const done = new Promise<WakeResult>((resolve) => d.onResult((r) => r.session_id === id && r.outcome === 'executed' && resolve(r)));
  sendMessage(store, id, 'hello');
  await done;
  await new Promise((r) => setImmediate(r)); // the hints' flush
  return { atStart, afterRun: kept() };
}

test('shard 0 of a shared home keeps the search index and the webhook deliveries', async (t) => {
  const r = await daemonOf(t, { index: 0, count: 2 });
  assert.deepEqual(r.atStart, { index: true, webhooks: true });
});

test('any other shard of a shared home keeps neither, at its start or after a run', async (t) => {
  const r = await daemonOf(t, { index: 1, count: 2 });
  assert.deepEqual(r.atStart, { index: false, webhooks: false });
  assert.deepEqual(r.afterRun, { index: false, webhooks: false });
});
