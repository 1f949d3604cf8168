/**
 * The patterns the model writes for glob and grep, and which of them are
 * refused before anything compiles them. Both end up as JavaScript regular
 * expressions, and V8's regexp compiler has limits that are not errors but
 * crashes: a deeply nested group overflows its stack, and an extglob nest
 * (`!(!(!(...)))`) compiles to an expression that makes it abort the whole
 * process. A worker thread does not contain either (a fatal error ends the
 * daemon), so the bounds are checked here, in the text, first.
 *
 * Every Sandbox matches globs with compileGlob() and grep patterns as
 * `new RegExp(pattern)` (no flags), line by line, so the host and the
 * memory sandbox agree on what matches.
 */
import picomatch from 'picomatch';

/** Longest glob pattern, and most wildcards in one, that glob compiles. */
const MAX_GLOB_PATTERN = 512;
const MAX_GLOB_WILDCARDS = 24;

/** Longest grep pattern, and deepest nest of groups in one, that grep compiles. */
const MAX_GREP_PATTERN = 2000;
const MAX_GREP_NESTING = 32;

/**
 * Compiles a glob with picomatch, the matcher fast-glob uses (braces, `**`,
 * classes, dot files matched), without extglobs. Returns the RegExp, or why
 * the pattern is refused.
 */
export function compileGlob(pattern: string): RegExp | string {
  if (pattern.length > MAX_GLOB_PATTERN) return `pattern is ${pattern.length} characters; at most ${MAX_GLOB_PATTERN}`;
  const wild = (pattern.match(/[*?[{]/g) ?? []).length;
  if (wild > MAX_GLOB_WILDCARDS) return `pattern has ${wild} wildcards; at most ${MAX_GLOB_WILDCARDS}`;
  try {
    return picomatch.makeRe(pattern, { dot: true, noextglob: true });
  } catch (e) {
    return `pattern is not a valid glob: ${(e as Error).message}`;
  }
}

/**
 * Why a grep pattern is refused (too long, nested too deep, not a valid
 * regular expression), or null when it may be compiled anywhere. Bounded
 * before the validity check, which compiles it.
 */
export function refuseGrepPattern(pattern: string): string | null {
  if (pattern.length > MAX_GREP_PATTERN) return `pattern is ${pattern.length} characters; at most ${MAX_GREP_PATTERN}`;
  const depth = groupDepth(pattern);
  if (depth > MAX_GREP_NESTING) return `pattern nests groups ${depth} deep; at most ${MAX_GREP_NESTING}`;
  try {
    new RegExp(pattern);
  } catch (e) {
    return `pattern is not a valid regular expression: ${(e as Error).message}`;
  }
  return null;
}

/** How deeply `(` nest in a pattern (escapes and classes skipped). */
function groupDepth(pattern: string): number {
  let depth = 0;
  let max = 0;
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '\\') i++;
    else if (inClass) inClass = c !== ']';
    else if (c === '[') inClass = true;
    else if (c === '(') max = Math.max(max, ++depth);
    else if (c === ')') depth = Math.max(0, depth - 1);
  }
  return max;
}

/** Whether a file's content counts as binary for grep and read: a NUL in its first 8000 bytes. */
export function isBinary(buf: Uint8Array): boolean {
  return buf.subarray(0, 8000).includes(0);
}
