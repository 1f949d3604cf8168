/**
 * What the server refuses, in the API's error envelope: no or a wrong key
 * (401), an unknown route (404), an id that is not a session id or a
 * symlinked session folder (404, nothing read outside the home), a body
 * too large (413), a bad field (400 naming it); and where the key comes from.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { apiBench, KEY } from './api-bench.js';
import { loadOrCreateApiKey, sameKey } from '../../src/http/api-key.js';
import { isLoopback, parseListen } from '../../src/http/listen-address.js';
import { tempHome } from '../helpers/home.js';

type Envelope = { type: string; error: { type: string; message: string } };

async function call(url: string, init: RequestInit & { key?: string | null } = {}): Promise<{ status: number; body: Envelope; headers: Headers }> {
  const headers = new Headers(init.headers);
  if (init.key !== null) headers.set('authorization', `Bearer ${init.key ?? KEY}`);
  const r = await fetch(url, { ...init, headers });
  return { status: r.status, body: (await r.json()) as Envelope, headers: r.headers };
}

test('auth: no key and a wrong key are 401 (the SDK raises AuthenticationError); x-api-key works as well as Bearer', async (t) => {
  const b = await apiBench(t);
  await assert.rejects(b.clientWith('wrong-key').beta.sessions.list(), (e: { status?: number; constructor: { name: string } }) => e.status === 401 && e.constructor.name === 'AuthenticationError');
  const none = await call(`${b.server.url}/v1/sessions`, { key: null });
  assert.equal(none.status, 401);
  assert.equal(none.body.error.type, 'authentication_error');
  const viaHeader = await fetch(`${b.server.url}/v1/sessions`, { headers: { 'x-api-key': KEY } });
  assert.equal(viaHeader.status, 200);
  assert.equal(sameKey(KEY, KEY), true);
  assert.equal(sameKey(`${KEY}x`, KEY), false);
});

test('an unknown route is a 404 in the envelope; a bad id never touches a path; a symlinked session folder is not followed', async (t) => {
  const b = await apiBench(t);
  const unknown = await call(`${b.server.url}/v1/nothing-here`);
  assert.equal(unknown.status, 404);
  assert.equal(unknown.body.type, 'error');
  assert.equal(unknown.body.error.type, 'not_found_error');
  const outside = await call(`${b.server.url}/nope`);
  assert.equal(outside.status, 404);

  for (const id of ['..%2F..%2Fetc', '%2e%2e', 'sessions', '019a0000-0000-7000-8000-00000000000g']) {
    const r = await call(`${b.server.url}/v1/sessions/${id}/events`);
    assert.equal(r.status, 404, id);
    assert.equal(r.body.error.type, 'not_found_error');
  }
  // A session folder that is a symlink to a session outside the home: refused, not read.
  const elsewhere = fs.mkdtempSync(path.join(os.tmpdir(), 'openboa-elsewhere-'));
  t.after(() => fs.rmSync(elsewhere, { recursive: true, force: true }));
  const real = b.session('secret work');
  const moved = path.join(elsewhere, real);
  fs.renameSync(b.store.paths(real).dir, moved);
  fs.symlinkSync(moved, b.store.paths(real).dir);
  const viaLink = await call(`${b.server.url}/v1/sessions/${real}/events`);
  assert.equal(viaLink.status, 404);
  await assert.rejects(b.client.beta.sessions.events.send(real, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'x' }] }] }), (e: { status?: number }) => e.status === 404);
  assert.equal(fs.readFileSync(path.join(moved, 'events.jsonl'), 'utf8').includes('"x"'), false);
});

test('a bad body is a 400 naming the field (not retried); an unknown field is named; a body too large is 413', async (t) => {
  const b = await apiBench(t);
  const s = await b.client.beta.sessions.create({ agent: 'test', environment_id: 'local' });
  const bad = await call(`${b.server.url}/v1/sessions/${s.id}/events`, { method: 'POST', body: JSON.stringify({ events: [{ type: 'user.message', content: [] }] }), headers: { 'content-type': 'application/json' } });
  assert.equal(bad.status, 400);
  assert.equal(bad.body.error.type, 'invalid_request_error');
  assert.match(bad.body.error.message, /^events\.0\.content: /);
  assert.equal(bad.headers.get('x-should-retry'), 'false');
  await assert.rejects(
    b.client.beta.sessions.create({ agent: 'test', environment_id: 'local', vault_ids: ['v'] }),
    (e: { status?: number; message?: string }) => e.status === 400 && /vault_ids: unknown field/.test(e.message ?? ''),
  );
  await assert.rejects(b.client.beta.sessions.list({ limit: 0 }), (e: { status?: number; message?: string }) => e.status === 400 && /limit: /.test(e.message ?? ''));
  await assert.rejects(b.client.beta.sessions.create({ agent: 'no-such-agent', environment_id: 'local' }), (e: { status?: number }) => e.status === 404);
  const big = await call(`${b.server.url}/v1/sessions/${s.id}/events`, {
    method: 'POST',
    body: JSON.stringify({ events: [{ type: 'user.message', content: [{ type: 'text', text: 'x'.repeat(5 * 1024 * 1024) }] }] }),
    headers: { 'content-type': 'application/json' },
  });
  assert.equal(big.status, 413);
  assert.equal(big.body.error.type, 'request_too_large');
  assert.equal(b.events(s.id).filter((e) => e.type === 'user.message').length, 0);
});

test('the key: OPENBOA_API_KEY, else made once into <home>/.openboa/api-key (0600) and read back; --listen parsing', (t) => {
  const h = tempHome(t);
  assert.deepEqual(loadOrCreateApiKey(h.home, { OPENBOA_API_KEY: ' k1 ' }), { value: 'k1', source: 'env', file: null });
  const made = loadOrCreateApiKey(h.home, {});
  assert.equal(made.source, 'created');
  assert.equal(fs.statSync(made.file!).mode & 0o777, 0o600);
  const again = loadOrCreateApiKey(h.home, {});
  assert.deepEqual(again, { value: made.value, source: 'file', file: made.file });
  assert.deepEqual(parseListen('127.0.0.1:7410'), { host: '127.0.0.1', port: 7410, loopback: true });
  assert.deepEqual(parseListen('7411'), { host: '127.0.0.1', port: 7411, loopback: true });
  assert.equal(parseListen('0.0.0.0:80').loopback, false);
  assert.equal(parseListen('[::1]:80').loopback, true);
  assert.throws(() => parseListen('example.com:80'), /--listen: expected HOST:PORT/);
  assert.equal(isLoopback('127.1.2.3'), true);
});
