/**
 * read, write, edit, glob, grep: the file tools. Every path goes through
 * VirtualFs.open(), which walks beneath the sandbox's mounts and returns an
 * open descriptor; the tools then read and write that descriptor, never the
 * path again, so nothing the agent's shell renames meanwhile can redirect
 * them (see src/core/sandbox/virtual-fs.ts). Paths in and out, and every
 * error message, are sandbox paths (/workspace/...), never host paths.
 */
import fs from 'node:fs';
import picomatch from 'picomatch';
import { EditInput, GlobInput, GrepInput, ReadInput, WriteInput } from '../schema/index.js';
import { FileError, PathError, type Opened, type VirtualFs } from '../sandbox/virtual-fs.js';
import { fileError } from '../sandbox/beneath.js';
import { GrepSearch, GREP_TIMEOUT_MS, matchPathsOffThread } from './grep-worker.js';
import { fail, ok, type Tool, type ToolContext, type ToolOutput } from './tool.js';

const MAX_GLOB_RESULTS = 1000;
const MAX_GREP_MATCHES = 500;
const MAX_GREP_FILE_BYTES = 5 * 1024 * 1024;
/** What grep reads in all, so a search over a huge tree ends with a clear word instead of exhausting memory. */
const MAX_GREP_TOTAL_BYTES = 256 * 1024 * 1024;
/** Entries a glob or grep walk looks at before it stops and says so. */
const MAX_WALK_ENTRIES = 200_000;
/** Files larger than this are not read whole (the model could not take them in anyway). */
export const MAX_READ_BYTES = 64 * 1024 * 1024;

class NotRegular extends Error {}

/** Runs a tool body; path and file errors become error results that name sandbox paths only. */
async function guard(virtualOf: string, fn: () => ToolOutput | Promise<ToolOutput>): Promise<ToolOutput> {
  try {
    return await fn();
  } catch (e) {
    if (e instanceof PathError || e instanceof FileError || e instanceof NotRegular) return fail(e.message);
    return fail(fileError(e, virtualOf).message);
  }
}

function isBinary(buf: Buffer): boolean {
  return buf.subarray(0, 8000).includes(0);
}

/**
 * Reads at most `limit` bytes of an open file, from its start; null when it
 * holds more. The size fstat saw at open is only a hint: the agent can grow
 * the file between that and the read (or keep it empty, which makes
 * readFileSync read to EOF however far that is), so the bound is on what is
 * read, never on what was stat'ed.
 */
export function readAtMost(fd: number, limit: number, sizeHint: number): Buffer | null {
  let buf = Buffer.allocUnsafe(Math.min(Math.max(sizeHint, 0), limit) + 1);
  let n = 0;
  for (;;) {
    if (n === buf.length) {
      if (n > limit) return null;
      const bigger = Buffer.allocUnsafe(Math.min(buf.length * 2, limit + 1));
      buf.copy(bigger, 0, 0, n);
      buf = bigger;
    }
    const got = fs.readSync(fd, buf, n, buf.length - n, n);
    if (got === 0) break;
    n += got;
  }
  return n > limit ? null : buf.subarray(0, n);
}

/** Reads a handle that must be a regular file (a FIFO or device is refused, never read). */
function readHandle(h: Opened): Buffer {
  if (!h.stat.isFile()) throw new NotRegular(`${h.virtual} is not a regular file`);
  const tooBig = () => new NotRegular(`${h.virtual} is more than the ${MAX_READ_BYTES} bytes read can take; use grep, or bash (head, tail, sed -n)`);
  if (h.stat.size > MAX_READ_BYTES) throw tooBig();
  const buf = readAtMost(h.fd, MAX_READ_BYTES, h.stat.size);
  if (!buf) throw tooBig();
  return buf;
}

/** Replaces the content of an open regular file. */
function writeHandle(h: Opened, data: string): void {
  if (!h.stat.isFile()) throw new NotRegular(`${h.virtual} is not a regular file`);
  fs.ftruncateSync(h.fd, 0);
  fs.writeSync(h.fd, Buffer.from(data, 'utf8'), 0, undefined, 0);
}

/**
 * Writes `data` to `file` (a sandbox path), creating it and its parent
 * directories; refuses read-only mounts, FIFOs and devices. Returns the
 * sandbox path written.
 */
export function writeFileIn(vfs: VirtualFs, file: string, data: string): string {
  const h = vfs.open(file, { write: true, parents: true });
  try {
    writeHandle(h, data);
    return h.virtual;
  } finally {
    h.close();
  }
}

export const readTool: Tool<typeof ReadInput> = {
  name: 'read',
  description:
    'Read a file (numbered lines) or list a directory. Paths are /workspace/... (or relative to it); /runtime holds your runtime facts, read-only.',
  input: ReadInput,
  async run(input, ctx) {
    return guard(ctx.vfs.absolute(input.file_path), () => {
      const h = ctx.vfs.open(input.file_path);
      try {
        if (h.stat.isDirectory()) {
          const { names, more } = ctx.vfs.list(h);
          if (names.length === 0) return ok('(empty directory)');
          return ok(names.join('\n') + (more ? `\n(more entries not shown; use glob or bash ls to look further)` : ''));
        }
        const buf = readHandle(h);
        if (isBinary(buf)) return ok(`(binary file, ${buf.length} bytes)`);
        const lines = buf.toString('utf8').split('\n');
        if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
        let [from, to] = input.view_range ?? [1, 0];
        if (to <= 0 || to > lines.length) to = lines.length;
        if (from > lines.length && lines.length > 0) return fail(`view_range starts at line ${from}, but ${h.virtual} has ${lines.length} lines`);
        const width = String(to).length;
        const out = lines.slice(from - 1, to).map((l, i) => `${String(from + i).padStart(width)}\t${l}`);
        return ok(out.length ? out.join('\n') : '(empty file)');
      } finally {
        h.close();
      }
    });
  },
};

export const writeTool: Tool<typeof WriteInput> = {
  name: 'write',
  description: 'Create or overwrite a whole file inside /workspace (parent directories are created).',
  input: WriteInput,
  async run(input, ctx) {
    return guard(ctx.vfs.absolute(input.file_path), () => {
      const written = writeFileIn(ctx.vfs, input.file_path, input.content);
      return ok(`wrote ${Buffer.byteLength(input.content)} bytes to ${written}`);
    });
  },
};

export const editTool: Tool<typeof EditInput> = {
  name: 'edit',
  description: 'Replace exact text in a file inside /workspace. old_string must occur exactly once unless replace_all is true.',
  input: EditInput,
  async run(input, ctx) {
    return guard(ctx.vfs.absolute(input.file_path), () => {
      // One descriptor for the read and the write: the file edited is the file read.
      const h = ctx.vfs.open(input.file_path, { modify: true });
      try {
        const text = readHandle(h).toString('utf8');
        const count = text.split(input.old_string).length - 1;
        if (count === 0) return fail(`old_string was not found in ${h.virtual}`);
        if (count > 1 && !input.replace_all) return fail(`old_string occurs ${count} times in ${h.virtual}; give more context or set replace_all`);
        const next = input.replace_all ? text.split(input.old_string).join(input.new_string) : text.replace(input.old_string, () => input.new_string);
        writeHandle(h, next);
        return ok(`replaced ${input.replace_all ? count : 1} occurrence(s) in ${h.virtual}`);
      } finally {
        h.close();
      }
    });
  },
};

/** Opens the directory (or file) a search starts from; /workspace by default. */
function searchRoot(ctx: ToolContext, p: string | undefined): Opened {
  return ctx.vfs.open(p ?? '/workspace');
}

/** Longest grep pattern, and deepest nest of groups in one, that grep compiles. */
const MAX_GREP_PATTERN = 2000;
const MAX_GREP_NESTING = 32;

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

/** Longest glob pattern, and most wildcards in one, that glob compiles. */
const MAX_GLOB_PATTERN = 512;
const MAX_GLOB_WILDCARDS = 24;

/**
 * Compiles a glob with picomatch, the matcher fast-glob uses (braces, `**`,
 * classes), without extglobs: a deeply nested `!(...)` compiles to a regular
 * expression that makes V8's compiler abort the whole process. Returns the
 * RegExp, or why the pattern is refused.
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

export const globTool: Tool<typeof GlobInput> = {
  name: 'glob',
  description: 'Find files by a glob pattern (e.g. **/*.md), newest first.',
  input: GlobInput,
  async run(input, ctx) {
    if (input.pattern.split('/').includes('..') || input.pattern.startsWith('/')) {
      return fail(`pattern ${JSON.stringify(input.pattern)} must be relative and must not contain ..; use path to choose the directory`);
    }
    return guard(ctx.vfs.absolute(input.path ?? '/workspace'), async () => {
      const root = searchRoot(ctx, input.path);
      try {
        if (!root.stat.isDirectory()) return fail(`${root.virtual} is not a directory`);
        const re = compileGlob(input.pattern);
        if (typeof re === 'string') return fail(re);
        const files: Array<{ rel: string; virtual: string; mtimeMs: number }> = [];
        const walked = await ctx.vfs.walk(
          root,
          (e) => {
            files.push({ rel: e.rel, virtual: e.virtual, mtimeMs: e.stat.mtimeMs });
            return true;
          },
          { signal: ctx.signal, maxEntries: MAX_WALK_ENTRIES },
        );
        // The match runs off the event loop, with a deadline: see matchPathsOffThread.
        const m = await matchPathsOffThread(
          re,
          files.map((f) => f.rel),
          { timeoutMs: Math.min(ctx.shellTimeoutMs, GREP_TIMEOUT_MS), signal: ctx.signal },
        );
        if ('error' in m) return fail(m.error);
        const sorted = m.matched.map((i) => files[i] as (typeof files)[number]).sort((a, b) => b.mtimeMs - a.mtimeMs);
        const list = sorted.slice(0, MAX_GLOB_RESULTS).map((e) => e.virtual);
        const notes = [
          sorted.length > MAX_GLOB_RESULTS ? `(${sorted.length - MAX_GLOB_RESULTS} more not shown)` : '',
          walked.truncated ? `(the search stopped after ${MAX_WALK_ENTRIES} entries; narrow path)` : '',
        ].filter(Boolean);
        if (list.length === 0) return ok(['no files matched', ...notes].join('\n'));
        return ok([...list, ...notes].join('\n'));
      } finally {
        root.close();
      }
    });
  },
};

export const grepTool: Tool<typeof GrepInput> = {
  name: 'grep',
  description: 'Search file contents with a regular expression (JavaScript syntax); prints path:line:text.',
  input: GrepInput,
  async run(input, ctx) {
    // Bounded before it is compiled anywhere: V8's regexp compiler overflows on a deep enough nest
    // (a fatal error, which a worker thread does not contain: the whole daemon would die).
    if (input.pattern.length > MAX_GREP_PATTERN) return fail(`pattern is ${input.pattern.length} characters; at most ${MAX_GREP_PATTERN}`);
    const depth = groupDepth(input.pattern);
    if (depth > MAX_GREP_NESTING) return fail(`pattern nests groups ${depth} deep; at most ${MAX_GREP_NESTING}`);
    try {
      new RegExp(input.pattern);
    } catch (e) {
      return fail(`pattern is not a valid regular expression: ${(e as Error).message}`);
    }
    return guard(ctx.vfs.absolute(input.path ?? '/workspace'), async () => {
      const root = searchRoot(ctx, input.path);
      const search = new GrepSearch(input.pattern, { maxMatches: MAX_GREP_MATCHES, timeoutMs: Math.min(ctx.shellTimeoutMs, GREP_TIMEOUT_MS), signal: ctx.signal });
      let total = 0;
      let stoppedAtBytes = false;
      // Contents are read here, from descriptors the walk opened; the worker only matches.
      const feed = (virtual: string, fd: number): boolean => {
        const st = fs.fstatSync(fd);
        if (!st.isFile() || st.size > MAX_GREP_FILE_BYTES) return true;
        if (total + st.size > MAX_GREP_TOTAL_BYTES) {
          stoppedAtBytes = true;
          return false;
        }
        const buf = readAtMost(fd, MAX_GREP_FILE_BYTES, st.size);
        if (!buf) return true; // grew past the limit since it was looked at: skipped like any large file
        total += buf.length;
        if (!isBinary(buf)) search.add(virtual, buf.toString('utf8'));
        return !search.finished;
      };
      try {
        if (root.stat.isDirectory()) {
          await ctx.vfs.walk(
            root,
            (e) => {
              if (e.stat.size > MAX_GREP_FILE_BYTES) return true;
              let fd: number;
              try {
                fd = e.open();
              } catch {
                return true; // vanished, or swapped for a symlink: skipped
              }
              try {
                return feed(e.virtual, fd);
              } finally {
                fs.closeSync(fd);
              }
            },
            { signal: ctx.signal, maxEntries: MAX_WALK_ENTRIES },
          );
        } else if (root.stat.isFile()) {
          feed(root.virtual, root.fd);
        } else {
          return fail(`${root.virtual} is not a regular file or a directory`);
        }
      } finally {
        root.close();
      }
      const r = await search.finish();
      if ('error' in r) return fail(r.error);
      const note = stoppedAtBytes ? `\n(the search stopped after reading ${MAX_GREP_TOTAL_BYTES} bytes; narrow path)` : '';
      if (r.total === 0) return ok(`no matches${note}`);
      return ok(r.lines.join('\n') + (r.total > r.lines.length ? `\n(${r.total - r.lines.length} more matches not shown)` : '') + note);
    });
  },
};
