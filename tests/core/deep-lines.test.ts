/** JSON nested too deeply is a bad line, rejected when read, never a stack overflow later; and wording. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_JSON_DEPTH, parseEventLine, parseWakeLine } from '../../src/core/store/parse-line.js';
import type { RawLine } from '../../src/core/store/jsonl.js';

const T = Date.parse('2026-11-21T10:00:00.000Z');
const raw = (text: string, no = 7): RawLine => ({ no, text, bytes: Buffer.byteLength(text), oversize: false, badUtf8: false });

function invalid(r: ReturnType<typeof parseEventLine> | ReturnType<typeof parseWakeLine>) {
  assert.equal(r.kind, 'invalid', `expected a rejection, got ${JSON.stringify(r).slice(0, 200)}`);
  return (r as Extract<typeof r, { kind: 'invalid' }>).rejection;
}

/** A user.message whose `extra` field nests `n` arrays (so the line is n + 1 levels deep). */
const nested = (n: number) => `{"type":"user.message","content":"hi","extra":${'['.repeat(n)}${']'.repeat(n)}}`;

test('a null line says null', () => {
  assert.match(invalid(parseEventLine(raw('null', 4), T)).message, /^events\.jsonl line 4: expected a JSON object, got null$/);
  assert.match(invalid(parseWakeLine(raw('null', 5), T)).message, /^wake-queue\.jsonl line 5: expected a JSON object, got null$/);
});

test(`a line nested ${MAX_JSON_DEPTH} levels deep is an event; one level more is rejected, naming the line, the path and the limit`, () => {
  assert.equal(MAX_JSON_DEPTH, 64);
  assert.equal(parseEventLine(raw(nested(MAX_JSON_DEPTH - 1)), T).kind, 'event');
  const rej = invalid(parseEventLine(raw(nested(MAX_JSON_DEPTH), 12), T));
  assert.equal(rej.line, 12);
  assert.equal(rej.code, 'invalid_event');
  assert.equal(rej.message, 'events.jsonl line 12: JSON nested more than 64 levels deep (at extra.0.0.0.0.0.0.0.0.0.0.0.…); the limit is 64');
});

test('an image source nested 5,000 deep is rejected with a short message, without using the stack', () => {
  const deep = `${'['.repeat(5000)}${']'.repeat(5000)}`;
  const line = `{"type":"user.message","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":${deep}}}]}`;
  const rej = invalid(parseEventLine(raw(line, 3), T));
  assert.match(rej.message, /^events\.jsonl line 3: JSON nested more than 64 levels deep \(at content\.0\.source\.data\.0\.0\.0/);
  assert.ok(rej.message.length < 300);
  // Far deeper than any stack: still a plain rejection.
  const deeper = `{"x":${'['.repeat(1_000_000)}${']'.repeat(1_000_000)}}`;
  assert.match(invalid(parseEventLine(raw(deeper, 4), T)).message, /line 4: JSON nested more than 64 levels deep \(at x\.0\.0/);
  assert.match(invalid(parseWakeLine(raw(`{"delay_seconds":1,"reason":"r","x":${deep}}`, 6), T)).message, /^wake-queue\.jsonl line 6: JSON nested more than 64 levels deep \(at x\.0/);
});
