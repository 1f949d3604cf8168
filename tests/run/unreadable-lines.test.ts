/** No line that is valid JSON can wedge a session: later messages are answered. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { bench, textOf } from '../helpers/run.js';
import { appendLines } from '../../src/core/store/jsonl.js';

test('a user.message whose image source nests 5,000 deep is reported once, and the messages around it are answered', async (t) => {
  const b = await bench(t, { steps: [{ text: 'answer one' }, { text: 'answer two' }] });
  const id = b.session('before the deep line');
  const deep = `${'['.repeat(5000)}${']'.repeat(5000)}`;
  appendLines(b.store.paths(id).events, [`{"type":"user.message","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":${deep}}}]}`]); // line 3

  const first = await b.wake(id);
  assert.equal(first.stop_reason?.type, 'end_turn');
  assert.equal(first.errors.length, 1);
  assert.match(first.errors[0]!, /^events\.jsonl line 3: JSON nested more than 64 levels deep \(at content\.0\.source\.data\.0\.0/);
  assert.equal(b.fake.requests.length, 1);

  b.store.appendUserEvent(id, { type: 'user.message', content: [{ type: 'text', text: 'after the deep line' }] });
  const second = await b.wake(id);
  assert.equal(second.stop_reason?.type, 'end_turn');
  assert.deepEqual(second.errors, []);
  assert.equal(b.fake.requests.length, 2);
  const last = b.fake.requests[1]!.body.messages.at(-1)!;
  assert.equal(textOf(last.content), 'after the deep line');

  const reports = b.events(id).filter((e) => e.type === 'session.error' && e.line === 3);
  assert.equal(reports.length, 1, 'reported once');
  assert.match(fs.readFileSync(b.store.paths(id).events, 'utf8').split('\n')[2]!, /^\{"type":"user\.message"/, 'the line stays in the log');
});

test('a user.message of 200,000 content blocks neither fails the run nor floods the request', async (t) => {
  // No context warnings here: this is about the one message (the warnings have their own tests).
  const b = await bench(t, { agent: { limits: { context_window_tokens: 20_000, max_output_tokens: 1000 }, context: { warn_at: [] } }, steps: [{ text: 'that was long' }, { text: 'yes' }] });
  const id = b.session();
  const blocks = [{ type: 'text', text: 'BIG-TAG many blocks follow' }, ...Array.from({ length: 200_000 }, () => ({ type: 'text', text: 'b' }))];
  appendLines(b.store.paths(id).events, [JSON.stringify({ type: 'user.message', content: blocks })]); // line 2

  const first = await b.wake(id);
  assert.deepEqual(first.errors, []);
  assert.equal(first.stop_reason?.type, 'end_turn');
  const texts = (b.fake.requests[0]!.body.messages[0]!.content as Array<{ text: string }>).map((x) => x.text);
  assert.equal(texts.length, 1);
  assert.match(texts[0]!, /^\[openboa: user\.message sevt_line_2 \(events\.jsonl line 2\) is named here only, to fit the context window: 200026 characters, starting "BIG-TAG many blocks follow b b b/);
  const ctx = JSON.parse(fs.readFileSync(`${b.store.paths(id).runtime}/context.json`, 'utf8'));
  assert.equal(ctx.messages_named_only, 1);

  b.store.appendUserEvent(id, { type: 'user.message', content: [{ type: 'text', text: 'and now?' }] });
  await b.wake(id);
  const blocksSent = b.fake.requests[1]!.body.messages.at(-1)!.content as Array<{ text: string }>;
  assert.equal(blocksSent.at(-1)!.text, 'and now?');
});
