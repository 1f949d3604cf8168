/**
 * The stream's bytes, read without the SDK: the headers at once, an
 * `event:` line on every message, `: ping` on the injected clock, and
 * `event: error` with the envelope when the session goes away.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { apiBench, KEY } from './api-bench.js';
import { PING_MS } from '../../src/http/stream-hub.js';

/** Reads the body until `want` shows up in what was read; returns everything read. */
async function readUntil(reader: ReadableStreamDefaultReader<Uint8Array>, want: RegExp, sofar = { text: '' }): Promise<string> {
  const dec = new TextDecoder();
  while (!want.test(sofar.text)) {
    const r = await reader.read();
    if (r.done) throw new Error(`the stream ended before ${want}: ${sofar.text}`);
    sofar.text += dec.decode(r.value, { stream: true });
  }
  return sofar.text;
}

test('raw SSE: headers at once, an event: line on each message, a ping each 15 s of the injected clock, event: error when the session is deleted', async (t) => {
  const b = await apiBench(t);
  const s = await b.client.beta.sessions.create({ agent: 'test', environment_id: 'local' });
  const res = await fetch(`${b.server.url}/v1/sessions/${s.id}/events/stream`, { headers: { authorization: `Bearer ${KEY}` } });
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
  const reader = res.body!.getReader();
  const seen = { text: '' };
  await readUntil(reader, /: connected\n\n/, seen);
  await b.client.beta.sessions.events.send(s.id, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'hi' }] }] });
  await readUntil(reader, /event: user\.message\ndata: \{.*"type":"user\.message".*\}\n\n/, seen);
  assert.equal(/: ping/.test(seen.text), false);
  await b.deps.clock.advance(PING_MS);
  await readUntil(reader, /: ping\n\n/, seen);
  // Every message that is not a comment has its event: line.
  for (const block of seen.text.split('\n\n').filter((x) => x !== '' && !x.startsWith(':'))) assert.match(block, /^event: [a-z_.]+\ndata: /);

  await b.client.beta.sessions.delete(s.id);
  const after = await readUntil(reader, /event: error\ndata: .*\n\n/, seen);
  const data = JSON.parse(/event: error\ndata: (.*)\n\n/.exec(after)![1]!) as { type: string; error: { type: string } };
  assert.equal(data.type, 'error');
  assert.equal(data.error.type, 'not_found_error');
  assert.equal((await reader.read()).done, true);
  await b.server.api.hub.whenClients(0);
});
