/**
 * MessageAssembler on event sequences the scripted Messages server does not
 * send (tests/core/model-contract.test.ts runs the common ones through the
 * real SDK): thinking kinds, server tool blocks, refusal details, usage
 * given in pieces.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MessageAssembler, type MessageEventLike } from '../../src/core/model/message-assembler.js';
import { MALFORMED_ARGUMENTS } from '../../src/core/tools/tool-arguments.js';

const assemble = (events: MessageEventLike[]) => {
  const a = new MessageAssembler();
  for (const e of events) a.add(e);
  return a;
};

test('blocks in index order: thinking with its signature, redacted thinking, text; server tool blocks and citations are left out', () => {
  const a = assemble([
    { type: 'message_start', message: { usage: { input_tokens: 40, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 30 } } },
    { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } },
    { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'Let me ' } },
    { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'look.' } },
    { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'sig' } },
    { type: 'content_block_stop', index: 0 },
    { type: 'content_block_start', index: 1, content_block: { type: 'redacted_thinking', data: 'opaque' } },
    { type: 'content_block_stop', index: 1 },
    { type: 'content_block_start', index: 2, content_block: { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: {} } },
    { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '{"query":"x"}' } },
    { type: 'content_block_stop', index: 2 },
    { type: 'content_block_start', index: 3, content_block: { type: 'text', text: '' } },
    { type: 'content_block_delta', index: 3, delta: { type: 'citations_delta' } },
    { type: 'content_block_delta', index: 3, delta: { type: 'text_delta', text: 'Found it.' } },
    { type: 'content_block_stop', index: 3 },
    // input and cache counts are totals given again only when they apply; output_tokens always
    { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 25, input_tokens: null } },
  ]);
  assert.equal(a.ended, false, 'no message_stop yet');
  a.add({ type: 'message_stop' });
  assert.equal(a.ended, true);
  assert.deepEqual(a.reply(), {
    content: [
      { type: 'thinking', thinking: 'Let me look.', signature: 'sig' },
      { type: 'redacted_thinking', data: 'opaque' },
      { type: 'text', text: 'Found it.' },
    ],
    stop_reason: 'end_turn',
    usage: { input_tokens: 40, output_tokens: 25, cache_creation_input_tokens: 0, cache_read_input_tokens: 30 },
    stop_details: null,
  });
});

test('a refusal keeps its details', () => {
  const a = assemble([
    { type: 'message_start', message: { usage: { input_tokens: 5, output_tokens: 0 } } },
    { type: 'message_delta', delta: { stop_reason: 'refusal', stop_details: { category: 'cyber', explanation: 'not that' } }, usage: { output_tokens: 0 } },
    { type: 'message_stop' },
  ]);
  assert.deepEqual(a.reply(), { content: [], stop_reason: 'refusal', usage: { input_tokens: 5, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 }, stop_details: { category: 'cyber', explanation: 'not that' } });
});

test('a tool use: its streamed JSON text parsed once; no deltas keep the input it started with; not an object is malformed', () => {
  const a = assemble([
    { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'toolu_1', name: 'bash', input: {} } },
    { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '{"comm' } },
    { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: 'and":"ls"}' } },
    { type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'toolu_2', name: 'read', input: { file_path: 'a' } } },
    { type: 'content_block_start', index: 2, content_block: { type: 'tool_use', id: 'toolu_3', name: 'bash', input: {} } },
    { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '["ls"]' } },
  ]);
  assert.deepEqual(a.reply().content, [
    { type: 'tool_use', id: 'toolu_1', name: 'bash', input: { command: 'ls' } },
    { type: 'tool_use', id: 'toolu_2', name: 'read', input: { file_path: 'a' } },
    { type: 'tool_use', id: 'toolu_3', name: 'bash', input: { [MALFORMED_ARGUMENTS]: '["ls"]' } },
  ]);
});

test('deltas are told with the place of their block in the reply (a skipped server block takes none), as they stream', () => {
  const told: Array<{ kind: string; index: number; text: string }> = [];
  const a = new MessageAssembler((d) => told.push(d));
  a.add({ type: 'content_block_start', index: 0, content_block: { type: 'server_tool_use', id: 'srv' } as never });
  a.add({ type: 'content_block_start', index: 1, content_block: { type: 'thinking', thinking: '' } });
  a.add({ type: 'content_block_delta', index: 1, delta: { type: 'thinking_delta', thinking: 'hm' } });
  a.add({ type: 'content_block_start', index: 2, content_block: { type: 'text', text: '' } });
  a.add({ type: 'content_block_delta', index: 2, delta: { type: 'text_delta', text: 'he' } });
  a.add({ type: 'content_block_delta', index: 2, delta: { type: 'text_delta', text: 'llo' } });
  assert.deepEqual(told, [
    { kind: 'thinking', index: 0, text: 'hm' },
    { kind: 'text', index: 1, text: 'he' },
    { kind: 'text', index: 1, text: 'llo' },
  ]);
  assert.deepEqual(a.reply().content.map((b) => b.type), ['thinking', 'text']);
});
