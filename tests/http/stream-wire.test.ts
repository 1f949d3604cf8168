/**
 * The stream's bytes, read without the SDK: the headers at once, an
 * `event:` line on every message, `: ping` on the injected clock, and
 * `event: error` with the envelope when the session goes away; how many
 * streams may be open at once, per session, per run token and for the key.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { apiBench, KEY } from './api-bench.js';
import { PING_MS, STREAM_LIMITS } from '../../src/http/stream-hub.js';
import { acquireLease } from '../../src/core/foundation/lease.js';
import { iso } from '../../src/core/foundation/clock.js';
import { mintRunToken } from '../../src/core/run/run-token.js';
import { createSession } from '../../src/core/ops/create-session.js';

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

test('streams are bounded: per session, per run token and for the key; one past a limit is a 429 in the envelope, and closing one makes room', async (t) => {
  const b = await apiBench(t, { streamLimits: { perSession: 3, perRun: 2, perKey: 4 } });
  const [a, c, d] = [b.session(), b.session(), b.session()];
  const open: AbortController[] = [];
  t.after(() => open.forEach((x) => x.abort()));
  const stream = async (id: string, credential = KEY) => {
    const ctl = new AbortController();
    const res = await fetch(`${b.server.url}/v1/sessions/${id}/events/stream`, { headers: { authorization: `Bearer ${credential}` }, signal: ctl.signal });
    if (res.status === 200) {
      open.push(ctl);
      await readUntil(res.body!.getReader(), /: connected\n\n/);
    }
    return { res, ctl };
  };
  const refused = async (r: { res: Response }, message: RegExp) => {
    assert.equal(r.res.status, 429);
    assert.equal(r.res.headers.get('x-should-retry'), 'false');
    const body = (await r.res.json()) as { type: string; error: { type: string; message: string } };
    assert.equal(body.type, 'error');
    assert.equal(body.error.type, 'rate_limit_error');
    assert.match(body.error.message, message);
  };
  const first = await stream(a);
  await stream(a);
  await stream(a);
  await refused(await stream(a), new RegExp(`^session ${a} has 3 event streams open, the most it may have at once`));
  await stream(c);
  await refused(await stream(d), /^the API key holds 4 event streams open, the most it may hold at once/);
  assert.deepEqual(b.server.api.hub.stats, { sessions: 2, clients: 4 });
  // A stream that goes away makes room at once, on its session and for its holder.
  first.ctl.abort();
  await b.server.api.hub.whenClients(3);
  assert.equal((await stream(a)).res.status, 200);

  // A run token: its own limit over its session and its children, whatever the key holds.
  const mine = b.session();
  const child = createSession(b.store, { agent: 'test', parentSessionId: mine }).id;
  const run = 'wrun_0000000000000000000000000000abcd';
  const token = mintRunToken(b.h.home, { agentId: 'test', sessionId: mine, runId: run });
  const lease = await acquireLease(b.store.paths(mine), { purpose: 'wake', wakeId: run, nowIso: iso(b.deps.clock.now()) });
  t.after(() => lease.release());
  assert.equal((await stream(mine, token)).res.status, 200);
  assert.equal((await stream(child, token)).res.status, 200);
  await refused(await stream(child, token), /^this run token holds 2 event streams open, the most it may hold at once/);
  assert.deepEqual(b.server.api.hub.stats, { sessions: 4, clients: 6 });
  // What a server has without streamLimits (docs/http.md says so).
  assert.deepEqual(STREAM_LIMITS, { perSession: 256, perRun: 8, perKey: 1024 });
});
