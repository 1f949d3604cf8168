/**
 * Cutting text to a length without splitting a character.
 *
 * A string's length counts UTF-16 code units, and a character outside the
 * Basic Multilingual Plane (most emoji) takes two: a surrogate pair. A cut
 * between the two leaves half a pair, a lone surrogate, which the Messages API
 * refuses with a 400 ("no low surrogate in string"). A 400 is not retried,
 * and every later request repeats the logged text, so one such cut ends a
 * session's conversation for good. Every cut of text that can reach a request
 * (or the log it is rebuilt from) goes through these two functions.
 */

const isHigh = (c: number) => c >= 0xd800 && c <= 0xdbff;
const isLow = (c: number) => c >= 0xdc00 && c <= 0xdfff;

/**
 * The start of `text`, at most `max` code units long: `text.slice(0, max)`,
 * one unit shorter when that would end between the halves of a pair. Returns
 * `text` itself when it is short enough, '' when `max` is 0 or less.
 */
export function cutHead(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = Math.max(0, Math.floor(max));
  if (end > 0 && isHigh(text.charCodeAt(end - 1)) && isLow(text.charCodeAt(end))) end -= 1;
  return text.slice(0, end);
}

/**
 * The end of `text`, at most `max` code units long: `text.slice(-max)`, one
 * unit shorter when that would start between the halves of a pair. Returns
 * `text` itself when it is short enough, '' when `max` is 0 or less (where
 * `slice(-0)` would return the whole text).
 */
export function cutTail(text: string, max: number): string {
  if (text.length <= max) return text;
  let start = text.length - Math.max(0, Math.floor(max));
  if (start < text.length && isLow(text.charCodeAt(start)) && isHigh(text.charCodeAt(start - 1))) start += 1;
  return text.slice(start);
}

/** ES2024 string methods (Node 20 has them; the ES2023 lib we compile against does not declare them). */
interface Es2024String {
  isWellFormed?(): boolean;
  toWellFormed?(): string;
}
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
const NATIVE = typeof (String.prototype as Es2024String).toWellFormed === 'function' && typeof (String.prototype as Es2024String).isWellFormed === 'function';

/** `s` with every lone surrogate replaced by U+FFFD; `s` itself when it has none. */
export function wellFormed(s: string): string {
  if (NATIVE) return (s as Es2024String).isWellFormed!() ? s : (s as Es2024String).toWellFormed!();
  return s.replace(LONE_SURROGATE, '\uFFFD');
}

/**
 * `v` with every string in it, keys too, made well-formed. Copies only what
 * changes (the same object when nothing does), so block identities and the
 * caches keyed on them survive. Logged lines nest at most 64 levels (deeper
 * ones are rejected when read); deeper values, or cycles, which only code can
 * build, throw here like any unconvertible event.
 */
export function wellFormedDeep<T>(v: T, depth = 0): T {
  if (typeof v === 'string') return wellFormed(v) as T;
  if (!v || typeof v !== 'object') return v;
  if (depth > 200) throw new Error('the event nests too deeply to be checked');
  if (Array.isArray(v)) {
    let out: unknown[] | null = null;
    for (let i = 0; i < v.length; i++) {
      const x = wellFormedDeep(v[i] as unknown, depth + 1);
      if (x !== v[i]) (out ??= v.slice())[i] = x;
    }
    return (out ?? v) as T;
  }
  let changed = false;
  const entries = Object.entries(v).map(([k, x]) => {
    const k2 = wellFormed(k);
    const x2 = wellFormedDeep(x, depth + 1);
    if (k2 !== k || x2 !== x) changed = true;
    return [k2, x2] as const;
  });
  // fromEntries defines own data properties, so a key "__proto__" stays a key.
  return changed ? (Object.fromEntries(entries) as T) : v;
}
