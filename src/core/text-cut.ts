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
