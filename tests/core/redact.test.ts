/**
 * The Redactor (src/core/foundation/redact.ts): a secret's whole value, and every run of
 * FRAGMENT_MIN or more of its characters, become its mark wherever they
 * appear; a shorter secret is matched whole only.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FRAGMENT_MIN, Redactor } from '../../src/core/foundation/redact.js';

const TOKEN = 'ghp_9fQ2xLr7Kd0Wm3Zp8Tn4Yb6Hc1Vs5Ge2Ja7N'; // 40 characters
const OTHER = 'sk-live-51HxQpZc8Rt2Wy7Lm4Nb9Vd3Fk6Js0Ga';

test('a prefix, a suffix and a middle piece of 16 or more characters are redacted; 15 are not', () => {
  const r = new Redactor({ TOKEN });
  assert.equal(TOKEN.length, 40);
  assert.equal(r.text(`tag ${TOKEN.slice(0, 30)} end`), 'tag [REDACTED:TOKEN] end');
  assert.equal(r.text(`${TOKEN.slice(24)}!`), '[REDACTED:TOKEN]!');
  assert.equal(r.text(`a${TOKEN.slice(7, 7 + FRAGMENT_MIN)}b`), 'a[REDACTED:TOKEN]b');
  assert.equal(r.text(TOKEN), '[REDACTED:TOKEN]');
  assert.equal(r.text(`${TOKEN}${TOKEN}`), '[REDACTED:TOKEN]', 'one run, one mark');
  const short = `x${TOKEN.slice(3, 3 + FRAGMENT_MIN - 1)}y`;
  assert.equal(r.text(short), short, 'a piece shorter than FRAGMENT_MIN is left');
  // Pieces at every offset and of every length from FRAGMENT_MIN are found, at every alignment in the text.
  for (let pad = 0; pad < 9; pad++) {
    for (let at = 0; at + FRAGMENT_MIN <= TOKEN.length; at += 5) {
      const piece = TOKEN.slice(at, at + FRAGMENT_MIN + (at % 3));
      assert.equal(r.text(`${'.'.repeat(pad)}${piece}.`), `${'.'.repeat(pad)}[REDACTED:TOKEN].`, `offset ${at}, pad ${pad}`);
    }
  }
});

test('a run is matched whatever the case of its ASCII letters: an upper-cased hex token, a lower-cased mixed one', () => {
  const hex = '9f3a6c0d2e7b41a8c5f09d3e6b2a7c4f1e8d0b5a';
  const r = new Redactor({ HEX: hex, TOKEN });
  assert.equal(r.text(`x ${hex.slice(4, 34).toUpperCase()} y`), 'x [REDACTED:HEX] y');
  assert.equal(r.text(`x ${TOKEN.toLowerCase()} y ${TOKEN.slice(0, 20).toUpperCase()}`), 'x [REDACTED:TOKEN] y [REDACTED:TOKEN]');
  const pin = new Redactor({ PIN: 'Hunter2Pass' });
  assert.equal(pin.text('hunter2pass Hunter2Pass'), 'hunter2pass [REDACTED:PIN]', 'a short secret: exactly');
});

test('a secret shorter than FRAGMENT_MIN is matched whole only; an empty one is ignored', () => {
  const r = new Redactor({ PIN: 'hunter2pass', EMPTY: '' });
  assert.deepEqual(r.names, ['PIN']);
  assert.equal(r.text('pw hunter2pass and hunter2 and hunter2passhunter2pass'), 'pw [REDACTED:PIN] and hunter2 and [REDACTED:PIN]', 'touching runs of one secret: one mark');
});

test('overlapping runs of two secrets become one mark; a short secret inside a long one goes with it; nothing is returned changed when nothing matched', () => {
  const r = new Redactor({ TOKEN, OTHER, PART: TOKEN.slice(10, 18) });
  const joined = `${TOKEN.slice(0, 20)}${OTHER.slice(5, 30)}`;
  assert.equal(r.text(`<${joined}>`), '<[REDACTED:TOKEN][REDACTED:OTHER]>', 'adjacent runs keep their own marks');
  assert.equal(r.text(`<${TOKEN.slice(8, 30)}>`), '<[REDACTED:TOKEN]>', 'PART lies inside the run: one mark');
  assert.equal(r.text(`<${TOKEN.slice(10, 18)}>`), '<[REDACTED:PART]>');
  const plain = 'nothing to see here, nothing at all, just words '.repeat(10);
  assert.equal(r.text(plain), plain);
  // A mark is never matched again: a secret that looks like part of a mark.
  const m = new Redactor({ X: 'REDACTED', TOKEN });
  assert.equal(m.text(`${TOKEN} REDACTED`), '[REDACTED:TOKEN] [REDACTED:X]');
});

test('keys and values of a JSON-like value are redacted, fragments too', () => {
  const r = new Redactor({ TOKEN });
  const v = r.deep({ [TOKEN.slice(0, 20)]: [{ note: `x ${TOKEN.slice(20)} y` }], n: 3, ok: true, none: null });
  assert.deepEqual(v, { '[REDACTED:TOKEN]': [{ note: 'x [REDACTED:TOKEN] y' }], n: 3, ok: true, none: null });
});

test('a run is widened rather than cut through a surrogate pair', () => {
  const secret = '\u{1F600}abcdefghijklmnopqrstuvwxyz'; // 😀 then letters
  const r = new Redactor({ S: secret });
  // Another emoji with the same low surrogate: the run starts at the low half; the mark takes the whole pair.
  const other = '\u{1F400}'; // 🐀: \ud83d\udc00; 😀 is \ud83d\ude00
  const text = `x\ud83c\ude00${secret.slice(2, 20)}y${other}`;
  const out = r.text(text);
  assert.equal(out, `x[REDACTED:S]y${other}`);
  assert.doesNotMatch(out, /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/);
});

test('a secret of one repeated character redacts every run of 16 or more of it (a stated limit, not a leak)', () => {
  const r = new Redactor({ A: 'a'.repeat(64) });
  assert.equal(r.text(`x${'a'.repeat(15)}x`), `x${'a'.repeat(15)}x`);
  assert.equal(r.text(`x${'a'.repeat(16)}x`), 'x[REDACTED:A]x');
  assert.equal(r.text(`x${'a'.repeat(100_000)}x`), 'x[REDACTED:A]x');
});

test('random secrets, random texts: no run of FRAGMENT_MIN characters of a secret survives, and text outside the runs is kept', () => {
  let seed = 12345;
  const rnd = (n: number) => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return seed % n;
  };
  const alphabet = 'abcdef0123456789';
  const word = (n: number) => Array.from({ length: n }, () => alphabet[rnd(alphabet.length)]).join('');
  for (let round = 0; round < 300; round++) {
    const secrets: Record<string, string> = {};
    for (let i = 0; i < 1 + rnd(4); i++) secrets[`S${i}`] = word(FRAGMENT_MIN + rnd(40));
    const values = Object.values(secrets);
    let text = '';
    for (let i = 0; i < 8; i++) {
      const s = values[rnd(values.length)]!;
      const at = rnd(s.length);
      text += rnd(2) ? word(rnd(30)) : s.slice(at, at + rnd(s.length));
    }
    const out = new Redactor(secrets).text(text);
    const bare = out.replace(/\[REDACTED:S\d\]/g, '\u0000');
    for (const s of values) {
      for (let at = 0; at + FRAGMENT_MIN <= s.length; at++) assert.ok(!bare.includes(s.slice(at, at + FRAGMENT_MIN)), `round ${round}: ${JSON.stringify({ secrets, text, out })}`);
    }
    // Every piece of the output between marks is text of the input, in order.
    let from = 0;
    for (const piece of bare.split('\u0000')) {
      const at = text.indexOf(piece, from);
      assert.ok(at >= 0, `round ${round}: ${JSON.stringify({ text, out })}`);
      from = at + piece.length;
    }
  }
});

test('bytes: the same Buffer when nothing matched, the redacted UTF-8 when something did', () => {
  const r = new Redactor({ TOKEN });
  const clean = Buffer.from([0xff, 0xfe, 0x41]); // not UTF-8: kept as it is
  assert.equal(r.bytes(clean), clean);
  assert.equal(r.bytes(Buffer.from(`k=${TOKEN.slice(0, 30)}\n`)).toString(), 'k=[REDACTED:TOKEN]\n');
  assert.equal(Redactor.none.bytes(clean), clean);
});
