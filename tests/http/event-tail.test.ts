/**
 * Newest-first pages (event-tail.ts) answer exactly what the general listing
 * answers: the same events, the same processed_at (also for a user event
 * whose run starts on a newer page), page after page, with types[] too;
 * what it does not judge (a line without created_at) is the general
 * listing's.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { apiBench, KEY } from './api-bench.js';

type Page = { data: Array<Record<string, unknown>>; next_page: string | null };

async function all(url: string, q: string): Promise<Array<Record<string, unknown>>> {
  const out: Array<Record<string, unknown>> = [];
  let page: string | null = null;
  for (let i = 0; i < 1000; i++) {
    const r = await fetch(`${url}?${q}${page ? `&page=${encodeURIComponent(page)}` : ''}`, { headers: { 'x-api-key': KEY } });
    assert.equal(r.status, 200);
    const p = (await r.json()) as Page;
    out.push(...p.data);
    page = p.next_page;
    if (!page) return out;
  }
  throw new Error('no end');
}

test('desc pages read from the end equal the whole listing reversed, at every page size and with types[]', async (t) => {
  const b = await apiBench(t, {
    agent: { tools: { write: { permission: 'always_ask' } } },
    steps: [{ text: 'one' }, { toolUses: [{ id: 'toolu_w', name: 'write', input: { file_path: 'a.md', content: 'x' } }] }, { text: 'two' }, { text: 'three' }],
  });
  const id = b.session('first');
  await b.wake(id);
  b.store.appendUserEvent(id, { type: 'user.message', content: 'second' });
  await b.wake(id);
  const asked = b.events(id).find((e) => e.type === 'agent.tool_use')!;
  b.store.appendUserEvent(id, { type: 'user.tool_confirmation', tool_use_id: asked.id, result: 'allow' });
  await b.wake(id);
  b.store.appendUserEvent(id, { type: 'user.pause' });
  b.store.appendUserEvent(id, { type: 'user.message', content: 'pending while paused' });
  const url = `${b.server.url}/v1/sessions/${id}/events`;
  const asc = await all(url, 'order=asc&limit=100');
  const want = [...asc].reverse();
  assert.ok(want.length > 15);
  // Read from the end: its cursor is a line and byte offset, not the general listing's.
  const first = (await (await fetch(`${url}?order=desc&limit=1`, { headers: { 'x-api-key': KEY } })).json()) as Page;
  assert.match(Buffer.from(first.next_page!, 'base64url').toString(), /^t\d+:\d+$/);
  for (const limit of [1, 2, 3, 7, 100]) {
    const got = await all(url, `order=desc&limit=${limit}`);
    assert.deepEqual(got, want, `limit ${limit}`);
  }
  // A user event's run starts on a newer page: its processed_at is still the run's time.
  const msgs = want.filter((e) => e.type === 'user.message');
  assert.equal(msgs.filter((e) => e.processed_at === null).length, 1);
  const types = 'types[]=user.message&types[]=agent.message';
  assert.deepEqual(await all(url, `order=desc&limit=2&${types}`), want.filter((e) => e.type === 'user.message' || e.type === 'agent.message'));
  // A line without created_at (its time pinned by the fold): the general listing answers, the same way.
  fs.appendFileSync(b.store.paths(id).events, `${JSON.stringify({ type: 'user.message', content: 'undated' })}\n`);
  const after = await all(url, 'order=asc&limit=100');
  assert.deepEqual(await all(url, 'order=desc&limit=3'), [...after].reverse());
});
