/**
 * `openboa serve` and `openboa daemon --listen`, run as the CLI runs them
 * (in this process): the refusal of a non-loopback address without a key,
 * the key made once and printed, and a daemon that serves the API and runs
 * what the SDK sends it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { cliInProcess } from '../helpers/cli.js';
import { tempHome, whenExists } from '../helpers/home.js';

test('serve: a non-loopback --listen without OPENBOA_API_KEY is refused before anything listens', async (t) => {
  const h = tempHome(t);
  const r = await cliInProcess(['serve', '--listen', '0.0.0.0:0'], { home: h.root, env: { OPENBOA_API_KEY: '' } });
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr, /--listen 0\.0\.0\.0:0 is not a loopback address: set OPENBOA_API_KEY/);
  assert.equal(fs.existsSync(path.join(h.root, '.openboa', 'api-key')), false);
  const bad = await cliInProcess(['serve', '--listen', 'nowhere'], { home: h.root });
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--listen: expected HOST:PORT/);
});

test('daemon --listen: the key is made and printed once; the SDK creates a session and the daemon in the process runs it', async (t) => {
  const h = tempHome(t);
  const stop = new AbortController();
  const running = cliInProcess(['daemon', '--listen', '127.0.0.1:0'], { home: h.root, signal: stop.signal, env: { OPENBOA_API_KEY: '' } });
  t.after(() => stop.abort());
  const endpoint = path.join(h.root, '.openboa', 'api.json');
  await whenExists(endpoint, (text) => text.includes('"url"'));
  const { url } = JSON.parse(fs.readFileSync(endpoint, 'utf8')) as { url: string };
  const key = fs.readFileSync(path.join(h.root, '.openboa', 'api-key'), 'utf8').trim();
  const client = new Anthropic({ baseURL: url, apiKey: key, maxRetries: 0 });
  const s = await client.beta.sessions.create({ agent: 'demo', environment_id: 'local' });
  const stream = await client.beta.sessions.events.stream(s.id);
  await client.beta.sessions.events.send(s.id, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'hello' }] }] });
  const types: string[] = [];
  for await (const e of stream) {
    types.push(e.type);
    if (e.type === 'session.status_idle') break;
  }
  assert.equal(types[0], 'user.message');
  assert.ok(types.includes('session.status_running'));
  assert.ok(types.includes('agent.message'));
  stop.abort();
  const r = await running;
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout.split(key).length - 1, 1, 'the key is printed once');
  assert.match(r.stdout, /API listening on http:\/\/127\.0\.0\.1:\d+/);
  // The server said where it was while it ran, and takes that back when it stops.
  assert.equal(fs.existsSync(endpoint), false);
});
