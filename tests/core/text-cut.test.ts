/**
 * Cuts never split a surrogate pair: cutHead/cutTail themselves, and the
 * clips that use them outside a run (the digest line, the event feed line).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cutHead, cutTail } from '../../src/core/foundation/text-cut.js';
import { digestOf } from '../../src/core/run/compaction.js';
import { describeEvent } from '../../src/core/views/event-view.js';
import type { SessionEvent } from '../../src/core/schema/index.js';

const LONE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const EMOJI = '\u{1F600}'; // two UTF-16 code units

test('cutHead keeps the start, never ending between the halves of a pair', () => {
  assert.equal(cutHead('abcdef', 3), 'abc');
  assert.equal(cutHead('abc', 3), 'abc');
  assert.equal(cutHead('abc', 10), 'abc');
  assert.equal(cutHead('abc', 0), '');
  assert.equal(cutHead('abc', -5), '');
  assert.equal(cutHead(`a${EMOJI}b`, 2), 'a', 'one unit fewer rather than half the emoji');
  assert.equal(cutHead(`a${EMOJI}b`, 3), `a${EMOJI}`);
  assert.equal(cutHead(EMOJI, 1), '');
  // already lone surrogates are not the cut's business: kept as they are
  assert.equal(cutHead('\uD83Dab', 1), '\uD83D');
});

test('cutTail keeps the end, never starting between the halves of a pair', () => {
  assert.equal(cutTail('abcdef', 3), 'def');
  assert.equal(cutTail('abc', 3), 'abc');
  assert.equal(cutTail('abc', 0), '', 'not the whole text, as slice(-0) would give');
  assert.equal(cutTail('abc', -1), '');
  assert.equal(cutTail(`a${EMOJI}b`, 2), 'b');
  assert.equal(cutTail(`a${EMOJI}b`, 3), `${EMOJI}b`);
  assert.equal(cutTail(EMOJI, 1), '');
});

test('every cut of a mixed text is a well-formed prefix or suffix, at most one unit short', () => {
  const text = `x${EMOJI.repeat(5)}yz${EMOJI}${EMOJI}w${EMOJI}`;
  for (let max = 0; max <= text.length + 1; max++) {
    const h = cutHead(text, max);
    const t = cutTail(text, max);
    assert.ok(text.startsWith(h) && text.endsWith(t), `max ${max}`);
    assert.ok(h.length <= max && h.length >= Math.min(max, text.length) - 1, `head length at max ${max}`);
    assert.ok(t.length <= max && t.length >= Math.min(max, text.length) - 1, `tail length at max ${max}`);
    assert.doesNotMatch(h, LONE, `head at max ${max}`);
    assert.doesNotMatch(t, LONE, `tail at max ${max}`);
  }
});

test('the digest clips a long line of emoji without leaving half of one', () => {
  const digest = digestOf([{ role: 'user', content: [{ type: 'text', text: EMOJI.repeat(100) }] }]);
  const line = digest.split('\n').find((l) => l.startsWith('user: '))!;
  assert.doesNotMatch(digest, LONE);
  assert.ok(line.endsWith(`${EMOJI}…`), line);
});

test('the event feed clips a message of emoji without leaving half of one', () => {
  const e = { id: 'sevt_1', type: 'user.message', created_at: '2026-01-01T00:00:00.000Z', content: [{ type: 'text', text: EMOJI.repeat(60) }] } as unknown as SessionEvent;
  const line = describeEvent(e);
  assert.doesNotMatch(line, LONE);
  assert.ok(line.endsWith(`${EMOJI}…`), line);
});
