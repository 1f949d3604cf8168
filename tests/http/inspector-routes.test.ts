/**
 * The routes the inspector added to the API: runtime/ files by a fixed
 * table of names (nothing from the request reaches a path; a symlink is
 * refused), the overview, pause and resume, search, and the page's static
 * files with their strict headers.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { apiBench, KEY } from './api-bench.js';

const get = (url: string, key: string | null = KEY, init: RequestInit = {}) => fetch(url, { ...init, headers: { ...(key ? { 'x-api-key': key } : {}), ...(init.body ? { 'content-type': 'application/json' } : {}) } });

test('runtime/: known names only, read through one handle, a symlink refused, the key required', async (t) => {
  const b = await apiBench(t, { steps: [{ text: 'ok' }] });
  const id = b.session('hi');
  await b.wake(id);
  const base = `${b.server.url}/v1/sessions/${id}/runtime`;
  const list = (await (await get(base)).json()) as { data: Array<{ name: string }> };
  assert.ok(list.data.some((f) => f.name === 'context.json'), JSON.stringify(list));
  const ctx = (await (await get(`${base}/context.json`)).json()) as { content: string; truncated: boolean };
  assert.equal(ctx.truncated, false);
  assert.ok(JSON.parse(ctx.content));
  assert.equal((await get(`${base}/context.json`, null)).status, 401);
  for (const bad of ['..%2Fsession.json', '%2E%2E%2Fevents.jsonl', 'session.json', 'traces', 'run-key']) {
    const r = await get(`${base}/${bad}`);
    assert.equal(r.status, 404, bad);
  }
  // The agent cannot write runtime/, but a symlink there is refused all the same (O_NOFOLLOW).
  fs.symlinkSync(path.join(b.store.paths(id).dir, 'run-key'), path.join(b.store.paths(id).runtime, 'plan.json'));
  assert.equal((await get(`${base}/plan.json`)).status, 404);
  assert.ok(!((await (await get(base)).json()) as { data: Array<{ name: string }> }).data.some((f) => f.name === 'plan.json'));
});

test('overview says why a session waits; pause and resume append through the CLI\'s operation', async (t) => {
  const b = await apiBench(t, { agent: { tools: { write: { permission: 'always_ask' } } }, steps: [{ toolUses: [{ id: 'toolu_w', name: 'write', input: { file_path: 'a.md', content: 'x' } }] }] });
  const id = b.session('write');
  await b.wake(id);
  const o = (await (await get(`${b.server.url}/v1/sessions/${id}/overview`)).json()) as { waiting: Array<{ name: string; kind: string; escalation: unknown }>; children: unknown[] };
  assert.deepEqual(o.waiting.map((w) => [w.name, w.kind, w.escalation]), [['write', 'tool', null]]);
  assert.deepEqual(o.children, []);
  const paused = await get(`${b.server.url}/v1/sessions/${id}/pause`, KEY, { method: 'POST', body: JSON.stringify({ reason: 'lunch' }) });
  assert.equal(paused.status, 200);
  assert.equal(((await paused.json()) as { data: Array<{ type: string }> }).data[0]!.type, 'user.pause');
  assert.deepEqual(b.store.snapshot(id).paused?.reason, 'lunch');
  const resumed = await get(`${b.server.url}/v1/sessions/${id}/resume`, KEY, { method: 'POST', body: '{}' });
  assert.equal(resumed.status, 200);
  assert.equal(b.store.snapshot(id).paused, null);
  assert.equal((await get(`${b.server.url}/v1/sessions/${id}/pause`, KEY, { method: 'POST', body: JSON.stringify({ nope: 1 }) })).status, 400);
});

test('search answers the core search\'s hits; it needs words', async (t) => {
  const b = await apiBench(t, { steps: [{ text: 'the walrus report is done' }] });
  const id = b.session('write about walruses');
  await b.wake(id);
  const r = (await (await get(`${b.server.url}/v1/search?q=walrus`)).json()) as { data: Array<{ session_id: string }> };
  assert.ok(r.data.some((h) => h.session_id === id), JSON.stringify(r));
  assert.equal((await get(`${b.server.url}/v1/search?q=`)).status, 400);
});

test('the page: served without the key, with a CSP that allows no inline script and no framing; nothing but its table', async (t) => {
  const b = await apiBench(t);
  const page = await get(`${b.server.url}/`, null);
  assert.equal(page.status, 200);
  const csp = page.headers.get('content-security-policy') ?? '';
  assert.match(csp, /script-src 'self'(;|$)/);
  assert.match(csp, /frame-ancestors 'none'/);
  assert.equal(page.headers.get('x-content-type-options'), 'nosniff');
  assert.doesNotMatch(await page.text(), /<script>|<script [^>]*>[^<]/);
  const hooks = await get(`${b.server.url}/inspector/vendor/hooks.mjs`, null);
  assert.match(hooks.headers.get('content-type') ?? '', /text\/javascript/);
  assert.match(await hooks.text(), /from"\.\/preact\.mjs"/);
  for (const bad of ['/inspector/../package.json', '/inspector/%2e%2e/package.json', '/inspector/nope.js', '/index.html']) {
    assert.equal((await get(`${b.server.url}${bad}`, null)).status, 404, bad);
  }
});
