/** Every event a run takes in reaches the model: whole, cut with a note, or named by a note. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { bench } from '../helpers/run.js';
import { appendLines } from '../../src/core/store/jsonl.js';
import type { RecordedRequest } from '../helpers/fake-anthropic.js';

/** Every text the request carries: text blocks and tool-result texts. */
function textsOf(req: RecordedRequest): string[] {
  return req.body.messages.flatMap((m) =>
    (m.content as Array<Record<string, unknown>>).flatMap((b) => {
      if (b.type === 'text') return [String(b.text)];
      if (b.type === 'tool_result') return (b.content as Array<{ text: string }>).map((c) => c.text);
      return [];
    }),
  );
}

const contextJson = (b: { store: { paths(id: string): { runtime: string } } }, id: string) => JSON.parse(fs.readFileSync(`${b.store.paths(id).runtime}/context.json`, 'utf8'));

/** Lines of ~1 KB that a person or program may append and that are no part of the conversation. */
const noise = (n: number) => Array.from({ length: n }, (_, i) => JSON.stringify({ type: 'session.updated', note: `noise ${i} ${'n'.repeat(1000)}` }));

test('a burst larger than the window: every message is in the request whole, cut or named, and context.json counts them', async (t) => {
  const window = 20_000;
  const b = await bench(t, { agent: { limits: { context_window_tokens: window, max_output_tokens: 1000 } }, steps: [{ text: 'read them all' }] });
  const id = b.session();
  const body = (k: number) => `MSG-${k} ${`burst filler ${k} `.repeat(2000)}`.slice(0, 30_000);
  for (let k = 0; k < 60; k++) b.store.appendUserEvent(id, { type: 'user.message', content: [{ type: 'text', text: body(k) }] });

  const r = await b.wake(id);
  assert.equal(r.processed_event_ids.length, 60);
  assert.equal(b.fake.requests.length, 1);
  const texts = textsOf(b.fake.requests[0]!);
  const whole: number[] = [];
  const cut: number[] = [];
  const named: number[] = [];
  for (let k = 0; k < 60; k++) {
    const tag = `MSG-${k} `;
    if (texts.includes(body(k))) whole.push(k);
    else if (texts.some((x) => x.startsWith(tag) && x.includes('[openboa: cut here to fit the context window'))) cut.push(k);
    else if (texts.some((x) => x.includes('is named here only, to fit the context window') && x.includes(`starting "${tag}`))) named.push(k);
    else assert.fail(`${tag.trim()} is nowhere in the request`);
  }
  assert.equal(whole.length + cut.length + named.length, 60);
  assert.ok(named.length > 0 && cut.length > 0, `named ${named.length}, cut ${cut.length}`);
  assert.deepEqual(named, Array.from({ length: named.length }, (_, i) => i), 'the oldest messages are the ones named');

  const ctx = contextJson(b, id);
  assert.equal(ctx.blocks_cut_to_fit, cut.length);
  assert.equal(ctx.messages_named_only, named.length);
  assert.equal(ctx.dropped_messages, 0);
  assert.equal(ctx.events_not_read, 0);
  // The messages are lines 2..61; those before the tail the window read were read back for the run.
  assert.ok(ctx.window_first_line > 2);
  assert.equal(ctx.taken_in_before_window, ctx.window_first_line - 2);
  assert.ok(ctx.estimated_tokens.total <= window - 1000, `the request fits: ${ctx.estimated_tokens.total} tokens`);
  // A named note says where the message is.
  const note = texts.find((x) => x.includes('starting "MSG-0 '))!;
  assert.match(note, /^\[openboa: user\.message sevt_\S+ \(events\.jsonl line 2\) is named here only, to fit the context window: 30000 characters, starting "MSG-0 burst filler 0 /);
});

test('the same log gives the same request', async (t) => {
  const run = async () => {
    const b = await bench(t, { agent: { limits: { context_window_tokens: 20_000, max_output_tokens: 1000 } }, steps: [{ text: 'ok' }] });
    const id = b.session();
    for (let k = 0; k < 40; k++) appendLines(b.store.paths(id).events, [JSON.stringify({ type: 'user.message', content: `MSG-${k} ${'same '.repeat(6000)}` })]);
    await b.wake(id);
    return b.fake.requests[0]!.body.messages;
  };
  assert.deepEqual(await run(), await run());
});

test('a message followed by more than a window of other lines still reaches the model whole', async (t) => {
  const b = await bench(t, { agent: { limits: { context_window_tokens: 6000, max_output_tokens: 500 } }, steps: [{ text: 'hi' }] });
  const id = b.session('hello WHOLE-TAG, are you there?');
  appendLines(b.store.paths(id).events, noise(100)); // ~100 KB, far more than the 36 KB tail
  await b.wake(id);
  assert.equal(b.fake.requests.length, 1, 'the message was answered');
  assert.ok(textsOf(b.fake.requests[0]!).includes('hello WHOLE-TAG, are you there?'));
  const ctx = contextJson(b, id);
  assert.equal(ctx.taken_in_before_window, 1);
  assert.equal(ctx.events_not_read, 0);
  assert.equal(ctx.window_starts_at_first_line, false);
});

test('an event taken in from beyond the read-back bound is still named in the request by id and line', async (t) => {
  const b = await bench(t, { agent: { limits: { context_window_tokens: 6000, max_output_tokens: 500 } }, steps: [{ text: 'noted' }] });
  const id = b.session();
  const events = b.store.paths(id).events;
  appendLines(events, [JSON.stringify({ type: 'user.message', content: 'FAR-AWAY by hand' })]); // line 2, id sevt_line_2
  const withId = b.store.appendUserEvent(id, { type: 'user.message', content: [{ type: 'text', text: 'FAR-AWAY with an id' }] }); // line 3
  for (let i = 0; i < 10; i++) appendLines(events, noise(1000)); // ~10 MB, past the 8 MiB bound
  b.store.appendUserEvent(id, { type: 'user.message', content: [{ type: 'text', text: 'NEAR message' }] });
  const r = await b.wake(id);
  assert.equal(r.processed_event_ids.length, 3);
  const texts = textsOf(b.fake.requests[0]!);
  assert.ok(texts.includes('NEAR message'));
  assert.ok(texts.some((x) => x.includes('sevt_line_2 (events.jsonl line 2) belongs here but is not in this request')), 'the hand-written one is named with its line');
  assert.ok(texts.some((x) => x.includes(`${withId.id} (line unknown) belongs here but is not in this request`)), 'the other is named by id');
  const ctx = contextJson(b, id);
  assert.equal(ctx.events_not_read, 2);
  assert.equal(ctx.taken_in_before_window, 0);
});
