/**
 * The sessions API driven by the real @anthropic-ai/sdk client: create,
 * retrieve, update, list with the SDK's cursor paging and filters, archive,
 * delete.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { apiBench } from './api-bench.js';

test('create (by id and by {type: agent}), retrieve, update (title, metadata patch), archive, delete', async (t) => {
  const b = await apiBench(t);
  const s = await b.client.beta.sessions.create({ agent: 'test', environment_id: 'local', title: 'first', metadata: { team: 'a', drop: 'x' } });
  assert.equal(s.type, 'session');
  assert.equal(s.status, 'idle');
  assert.equal(s.agent.id, 'test');
  assert.deepEqual(s.metadata, { team: 'a', drop: 'x' });
  assert.equal(s.archived_at, null);
  // The session is the store's: the CLI's view of it agrees.
  assert.equal(b.store.snapshot(s.id).title, 'first');

  const s2 = await b.client.beta.sessions.create({ agent: { type: 'agent', id: 'test', version: 1 }, environment_id: 'local' });
  assert.equal(s2.title, null);

  const up = await b.client.beta.sessions.update(s.id, { title: 'renamed', metadata: { team: 'b', drop: null, added: 'y' } });
  assert.equal(up.title, 'renamed');
  assert.deepEqual(up.metadata, { team: 'b', added: 'y' });
  assert.deepEqual((await b.client.beta.sessions.retrieve(s.id)).metadata, { team: 'b', added: 'y' });

  const arch = await b.client.beta.sessions.archive(s.id);
  assert.ok(arch.archived_at);
  // Archived sessions are hidden from a listing unless asked for.
  assert.deepEqual((await b.client.beta.sessions.list()).data.map((x) => x.id), [s2.id]);
  assert.deepEqual((await b.client.beta.sessions.list({ include_archived: true })).data.map((x) => x.id), [s2.id, s.id]);

  const del = await b.client.beta.sessions.delete(s2.id);
  assert.deepEqual(del, { id: s2.id, type: 'session_deleted' });
  assert.equal(fs.existsSync(b.store.paths(s2.id).dir), false);
  await assert.rejects(b.client.beta.sessions.retrieve(s2.id), (e: { status?: number; error?: { error?: { type?: string } } }) => e.status === 404 && e.error?.error?.type === 'not_found_error');
});

test('list pages with the SDK cursor (both ways), newest first by default; statuses[], agent_id and created_at filter', async (t) => {
  const b = await apiBench(t);
  const ids: string[] = [];
  for (let i = 0; i < 7; i++) {
    ids.push((await b.client.beta.sessions.create({ agent: 'test', environment_id: 'local', title: `s${i}` })).id);
    await b.deps.clock.advance(1000);
  }
  const first = await b.client.beta.sessions.list({ limit: 3 });
  assert.deepEqual(first.data.map((s) => s.id), ids.slice(4).reverse());
  assert.ok(first.hasNextPage());
  // The SDK's auto-paging walks every page once.
  const all: string[] = [];
  for await (const s of b.client.beta.sessions.list({ limit: 3 })) all.push(s.id);
  assert.deepEqual(all, [...ids].reverse());
  const asc: string[] = [];
  for await (const s of b.client.beta.sessions.list({ limit: 2, order: 'asc' })) asc.push(s.id);
  assert.deepEqual(asc, ids);
  // prev_page goes back to the page before.
  const second = await first.getNextPage();
  assert.deepEqual(second.data.map((s) => s.id), ids.slice(1, 4).reverse());
  const back = await b.client.beta.sessions.list({ limit: 3, page: (second as unknown as { prev_page: string }).prev_page });
  assert.deepEqual(back.data.map((s) => s.id), ids.slice(4).reverse());

  // A session with a pending message is idle, a running one would be running: filter by status.
  assert.equal((await b.client.beta.sessions.list({ statuses: ['running'] })).data.length, 0);
  assert.equal((await b.client.beta.sessions.list({ statuses: ['idle', 'running'], limit: 100 })).data.length, 7);
  assert.equal((await b.client.beta.sessions.list({ agent_id: 'demo' })).data.length, 0);
  const created = b.store.snapshot(ids[2]!).created_at;
  const since = await b.client.beta.sessions.list({ 'created_at[gte]': created, order: 'asc', limit: 100 });
  assert.deepEqual(since.data.map((s) => s.id), ids.slice(2));
});
