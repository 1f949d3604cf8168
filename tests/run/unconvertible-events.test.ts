/**
 * Defence in depth: an event that passes validation but still fails to
 * convert into the conversation is named where it would have entered and
 * listed as a problem (the run reports it once); feeding never throws.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConversationBuilder, type LoggedEvent } from '../../src/core/run/conversation.js';
import type { SessionEvent } from '../../src/core/schema/index.js';

let n = 0;
const ev = (e: Record<string, unknown>): LoggedEvent => ({ line: ++n, event: { id: `sevt_${n}`, created_at: '2026-11-21T10:00:00.000Z', ...e } as unknown as SessionEvent });
const taking = (...ids: LoggedEvent[]) => ev({ type: 'session.status_running', wake_id: 'w', trigger: 'event', processed_event_ids: ids.map((x) => x.event.id) });

test('an event that throws while it is taken in or measured is named where it would have entered, and listed once as a problem', () => {
  n = 0;
  const cyclic: Record<string, unknown> = { type: 'base64', media_type: 'image/png' };
  cyclic.self = cyclic; // JSON.stringify throws: its size cannot be estimated
  const unmeasurable = ev({ type: 'user.message', content: [{ type: 'image', source: cyclic }] });
  const blocks = [{ type: 'text', text: 'x' }];
  Object.defineProperty(blocks, 'map', { value: () => { throw new Error('boom'); } }); // throws while taken in
  const unconvertible = ev({ type: 'user.message', content: blocks });
  const fine = ev({ type: 'user.message', content: [{ type: 'text', text: 'still here' }] });
  const b = new ConversationBuilder();
  for (const e of [unmeasurable, unconvertible, fine, taking(unmeasurable, unconvertible, fine)]) b.feed(e.line, e.event);
  const v = b.view();
  assert.equal(v.messages.length, 1);
  const texts = (v.messages[0]!.content as Array<{ text: string }>).map((x) => x.text);
  assert.equal(texts.length, 3);
  assert.match(texts[0]!, /^\[openboa: user\.message sevt_1 \(events\.jsonl line 1\) belongs here but is not in this request: it could not be converted \(TypeError: Converting circular structure/);
  assert.match(texts[1]!, /^\[openboa: user\.message sevt_2 \(events\.jsonl line 2\) belongs here but is not in this request: it could not be converted \(Error: boom\)/);
  assert.equal(texts[2], 'still here');
  assert.deepEqual(b.problems.map((p) => [p.line, p.eventId]), [[1, 'sevt_1'], [2, 'sevt_2']]);
  assert.match(b.problems[0]!.message, /^events\.jsonl line 1: user\.message sevt_1 could not be converted into the conversation \(TypeError: Converting circular structure/);
});

test('a tool result that cannot be measured keeps its pairing: the model gets an error result naming it', () => {
  n = 0;
  const m = ev({ type: 'user.message', content: [{ type: 'text', text: 'go' }] });
  const run = taking(m);
  const start = ev({ type: 'span.model_request_start' });
  const use = ev({ type: 'agent.tool_use', name: 'bash', input: { command: 'ls' }, model_tool_use_id: 'toolu_1', evaluated_permission: 'allow' });
  const end = ev({ type: 'span.model_request_end', model_request_start_id: start.event.id, is_error: false, model_usage: { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 } });
  const content: Array<Record<string, unknown>> = [{ type: 'text', text: 'out' }];
  content[0]!.loop = content;
  const result = ev({ type: 'agent.tool_result', tool_use_id: use.event.id, content, is_error: false });
  const b = new ConversationBuilder();
  for (const e of [m, run, start, use, end, result]) b.feed(e.line, e.event);
  const last = b.view().messages.at(-1)!;
  assert.equal(last.role, 'user');
  const r = last.content[0] as { type: string; tool_use_id: string; is_error: boolean; content: Array<{ text: string }> };
  assert.equal(r.type, 'tool_result');
  assert.equal(r.tool_use_id, 'toolu_1');
  assert.equal(r.is_error, true);
  assert.match(r.content[0]!.text, /agent\.tool_result sevt_6 \(events\.jsonl line 6\) belongs here but is not in this request/);
  assert.deepEqual(b.problems.map((p) => p.line), [6]);
});
