import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseEventLine, parseWakeLine } from '../../src/core/store/parse-line.js';
import type { RawLine } from '../../src/core/store/jsonl.js';

const T = Date.parse('2026-11-21T10:00:00.000Z');
const raw = (text: string, no = 7, extra: Partial<RawLine> = {}): RawLine => ({ no, text, bytes: Buffer.byteLength(text), oversize: false, badUtf8: false, ...extra });

function invalid(r: ReturnType<typeof parseEventLine> | ReturnType<typeof parseWakeLine>) {
  assert.equal(r.kind, 'invalid', `expected a rejection, got ${JSON.stringify(r)}`);
  return (r as Extract<typeof r, { kind: 'invalid' }>).rejection;
}

test('the hand-written shorthand gets sevt_line_<N>, the read time and content blocks', () => {
  const r = parseEventLine(raw('{"type":"user.message","content":"hello"}', 12), T);
  assert.equal(r.kind, 'event');
  if (r.kind !== 'event') return;
  assert.equal(r.event.id, 'sevt_line_12');
  assert.equal(r.event.created_at, '2026-11-21T10:00:00.000Z');
  assert.deepEqual(r.event.type === 'user.message' && r.event.content, [{ type: 'text', text: 'hello' }]);
});

test('an explicit id and created_at are kept, and unknown fields survive', () => {
  const r = parseEventLine(raw('{"id":"sevt_x","type":"user.message","created_at":"2026-01-01T00:00:00Z","content":[{"type":"text","text":"hi"}],"from":"ci"}'), T);
  assert.equal(r.kind, 'event');
  if (r.kind !== 'event') return;
  assert.equal(r.event.id, 'sevt_x');
  assert.equal(r.event.created_at, '2026-01-01T00:00:00Z');
  assert.equal((r.event as Record<string, unknown>).from, 'ci');
});

test('invalid JSON is rejected with the line number and an excerpt', () => {
  const rej = invalid(parseEventLine(raw('{"type": "user.message", content: hi}', 3), T));
  assert.equal(rej.line, 3);
  assert.equal(rej.code, 'invalid_event');
  assert.match(rej.message, /^events\.jsonl line 3: not valid JSON/);
  assert.match(rej.message, /content: hi/);
});

test('an unknown type is rejected with the closest known type, the writable types and an excerpt, not every type', () => {
  const rej = invalid(parseEventLine(raw('{"type":"user.mesage","content":"x"}', 4), T));
  assert.match(rej.message, /line 4: unknown event type "user\.mesage" \(did you mean user\.message\?\); people and programs write user\.message, user\.interrupt/);
  assert.match(rej.message, /: "\{\\"type\\":\\"user\.mesage\\"/, 'an excerpt of the line');
  assert.doesNotMatch(rej.message, /span\.model_request_start/, 'not the list of every event type');
  assert.doesNotMatch(invalid(parseEventLine(raw('{"type":"zzzz"}', 6), T)).message, /did you mean/);
  const missing = invalid(parseEventLine(raw('{"content":"x"}', 5), T));
  assert.match(missing.message, /line 5: missing "type"/);
});

test('valid JSON with a wrong field type names the field', () => {
  const rej = invalid(parseEventLine(raw('{"type":"user.message","content":42}', 9), T));
  assert.match(rej.message, /^events\.jsonl line 9: user\.message: content: /);
  const conf = invalid(parseEventLine(raw('{"id":"sevt_c","type":"user.tool_confirmation","tool_use_id":"sevt_1","result":"maybe"}', 10), T));
  assert.match(conf.message, /result: /);
  assert.equal(conf.eventId, 'sevt_c');
});

test('a JSON value that is not an object is rejected', () => {
  assert.match(invalid(parseEventLine(raw('[1,2]'), T)).message, /expected a JSON object, got an array/);
  assert.match(invalid(parseEventLine(raw('"hi"'), T)).message, /expected a JSON object, got string/);
});

test('an oversize line is rejected without echoing it whole', () => {
  const rej = invalid(parseEventLine(raw('{"x":"aaaa', 2, { oversize: true, bytes: 70_000_000 }), T));
  assert.match(rej.message, /line 2: line is 70000000 bytes, over the limit/);
  assert.ok(rej.message.length < 400);
});

test('a 10 MB line of garbage yields a short message', () => {
  const rej = invalid(parseEventLine(raw(`{${'z'.repeat(10 * 1024 * 1024)}`), T));
  assert.ok(rej.message.length < 400, `message is ${rej.message.length} chars`);
});

test('blank lines are neither events nor errors', () => {
  assert.equal(parseEventLine(raw('   '), T).kind, 'blank');
});

test('wake shorthand: due_at or delay_seconds, id wake_line_<N>', () => {
  const a = parseWakeLine(raw('{"due_at":"2026-11-21T10:05:00Z","reason":"check"}', 4), T);
  assert.equal(a.kind, 'wake');
  if (a.kind === 'wake' && a.record.type === 'wake.scheduled') {
    assert.equal(a.record.id, 'wake_line_4');
    assert.equal(a.record.due_at, '2026-11-21T10:05:00.000Z');
    assert.equal(a.record.source, 'hand');
    assert.equal(a.record.provisional, undefined);
  }
  const b = parseWakeLine(raw('{"delay_seconds":90,"reason":"later"}', 5), T);
  assert.equal(b.kind, 'wake');
  if (b.kind === 'wake' && b.record.type === 'wake.scheduled') {
    assert.equal(b.record.due_at, '2026-11-21T10:01:30.000Z');
    assert.equal(b.record.provisional, true);
  }
});

test('wake lines: both or neither time, a missing reason, an unknown type are rejected', () => {
  assert.match(invalid(parseWakeLine(raw('{"due_at":"2026-11-21T10:05:00Z","delay_seconds":5,"reason":"x"}', 2), T)).message, /wake-queue\.jsonl line 2: .*exactly one of due_at/);
  assert.match(invalid(parseWakeLine(raw('{"reason":"x"}', 3), T)).message, /exactly one of due_at/);
  assert.match(invalid(parseWakeLine(raw('{"delay_seconds":5}', 4), T)).message, /reason/);
  assert.match(invalid(parseWakeLine(raw('{"type":"wake.snoozed","wake_id":"w"}', 5), T)).message, /unknown record type "wake\.snoozed"/);
  assert.match(invalid(parseWakeLine(raw('{"type":"wake.consumed"}', 6), T)).message, /wake\.consumed: wake_id/);
});
