/**
 * read, write, edit, glob, grep: the file tools. Each is one or two
 * operations of the run's Sandbox (src/core/sandbox/sandbox.ts), which
 * confines paths to the mounts and, on the host, walks beneath them with
 * descriptors so nothing the agent's shell renames can redirect a tool.
 * The tools own the policy (how much is read, searched and shown, and how
 * the answer reads); paths in and out, and every error, are sandbox paths
 * (/workspace/...), never host paths.
 */
import { EditInput, GlobInput, GrepInput, ReadInput, WriteInput } from '../schema/index.js';
import { isFailure } from '../sandbox/sandbox.js';
import { isBinary } from '../sandbox/search-patterns.js';
import { fail, ok, type Tool, type ToolOutput } from './tool.js';

const MAX_GLOB_RESULTS = 1000;
const MAX_GREP_MATCHES = 500;
const MAX_GREP_FILE_BYTES = 5 * 1024 * 1024;
/** What grep reads in all, so a search over a huge tree ends with a clear word instead of exhausting memory. */
const MAX_GREP_TOTAL_BYTES = 256 * 1024 * 1024;
/** Entries a glob or grep walk looks at before it stops and says so. */
const MAX_WALK_ENTRIES = 200_000;
/** Entries read lists of one directory. */
const MAX_LIST_ENTRIES = 2000;
/** Longest a glob or grep may match, at most (the environment's shell timeout when shorter). */
const SEARCH_TIMEOUT_MS = 20_000;
/** Files larger than this are not read whole (the model could not take them in anyway). */
export const MAX_READ_BYTES = 64 * 1024 * 1024;

const tooBig = (virtual: string) => fail(`${virtual} is more than the ${MAX_READ_BYTES} bytes read can take; use grep, or bash (head, tail, sed -n)`);

export const readTool: Tool<typeof ReadInput> = {
  name: 'read',
  description:
    'Read a file (numbered lines) or list a directory. Paths are /workspace/... (or relative to it); /runtime holds your runtime facts, read-only.',
  input: ReadInput,
  async run(input, ctx) {
    const signal = ctx.signal;
    const r = await ctx.sandbox.read(input.file_path, { signal, maxBytes: MAX_READ_BYTES });
    if (isFailure(r) && r.code === 'EISDIR') {
      // Read first, list when it is a directory: each is one walk that uses what it opened (no stat, then a read).
      const d = await ctx.sandbox.list(input.file_path, { signal, max: MAX_LIST_ENTRIES });
      if (isFailure(d)) return fail(d.error);
      if (d.names.length === 0) return ok('(empty directory)');
      return ok(d.names.join('\n') + (d.more ? `\n(more entries not shown; use glob or bash ls to look further)` : ''));
    }
    if (isFailure(r)) return fail(r.error);
    if (!r.data) return tooBig(r.virtual);
    const buf = r.data;
    if (buf.length === 0) return ok('(empty file)');
    if (isBinary(buf)) return ok(`(binary file, ${buf.length} bytes)`);
    const lines = buf.toString('utf8').split('\n');
    if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
    let [from, to] = input.view_range ?? [1, 0];
    if (to <= 0 || to > lines.length) to = lines.length;
    if (from > lines.length && lines.length > 0) return fail(`view_range starts at line ${from}, but ${r.virtual} has ${lines.length} lines`);
    const width = String(to).length;
    const out = lines.slice(from - 1, to).map((l, i) => `${String(from + i).padStart(width)}\t${l}`);
    return ok(out.length ? out.join('\n') : '(empty file)');
  },
};

export const writeTool: Tool<typeof WriteInput> = {
  name: 'write',
  description: 'Create or overwrite a whole file inside /workspace (parent directories are created).',
  input: WriteInput,
  async run(input, ctx) {
    const r = await ctx.sandbox.write(input.file_path, input.content, { signal: ctx.signal });
    if (isFailure(r)) return fail(r.error);
    return ok(`wrote ${r.bytes} bytes to ${r.virtual}`);
  },
};

export const editTool: Tool<typeof EditInput> = {
  name: 'edit',
  description: 'Replace exact text in a file inside /workspace. old_string must occur exactly once unless replace_all is true.',
  input: EditInput,
  async run(input, ctx) {
    // The answer is decided inside the change, which sees the content the sandbox read (and will write back).
    let answer: ToolOutput = fail('the file was not changed');
    const r = await ctx.sandbox.modify(
      input.file_path,
      (content, virtual) => {
        if (!content) {
          answer = tooBig(virtual);
          return null;
        }
        const text = content.toString('utf8');
        const count = text.split(input.old_string).length - 1;
        if (count === 0) {
          answer = fail(`old_string was not found in ${virtual}`);
          return null;
        }
        if (count > 1 && !input.replace_all) {
          answer = fail(`old_string occurs ${count} times in ${virtual}; give more context or set replace_all`);
          return null;
        }
        answer = ok(`replaced ${input.replace_all ? count : 1} occurrence(s) in ${virtual}`);
        return input.replace_all ? text.split(input.old_string).join(input.new_string) : text.replace(input.old_string, () => input.new_string);
      },
      { signal: ctx.signal, maxBytes: MAX_READ_BYTES },
    );
    if (isFailure(r)) return fail(r.error);
    return answer;
  },
};

export const globTool: Tool<typeof GlobInput> = {
  name: 'glob',
  description: 'Find files by a glob pattern (e.g. **/*.md), newest first.',
  input: GlobInput,
  async run(input, ctx) {
    if (input.pattern.split('/').includes('..') || input.pattern.startsWith('/')) {
      return fail(`pattern ${JSON.stringify(input.pattern)} must be relative and must not contain ..; use path to choose the directory`);
    }
    const r = await ctx.sandbox.glob(input.pattern, {
      ...(input.path !== undefined ? { path: input.path } : {}),
      signal: ctx.signal,
      timeoutMs: Math.min(ctx.shellTimeoutMs, SEARCH_TIMEOUT_MS),
      maxEntries: MAX_WALK_ENTRIES,
    });
    if (isFailure(r)) return fail(r.error);
    // Newest first; the sort is stable, so files of the same time keep the walk's order.
    const sorted = [...r.files].sort((a, b) => b.mtimeMs - a.mtimeMs);
    const list = sorted.slice(0, MAX_GLOB_RESULTS).map((e) => e.virtual);
    const notes = [
      sorted.length > MAX_GLOB_RESULTS ? `(${sorted.length - MAX_GLOB_RESULTS} more not shown)` : '',
      r.truncated ? `(the search stopped after ${MAX_WALK_ENTRIES} entries; narrow path)` : '',
    ].filter(Boolean);
    if (list.length === 0) return ok(['no files matched', ...notes].join('\n'));
    return ok([...list, ...notes].join('\n'));
  },
};

export const grepTool: Tool<typeof GrepInput> = {
  name: 'grep',
  description: 'Search file contents with a regular expression (JavaScript syntax); prints path:line:text.',
  input: GrepInput,
  async run(input, ctx) {
    const r = await ctx.sandbox.grep(input.pattern, {
      ...(input.path !== undefined ? { path: input.path } : {}),
      signal: ctx.signal,
      timeoutMs: Math.min(ctx.shellTimeoutMs, SEARCH_TIMEOUT_MS),
      maxEntries: MAX_WALK_ENTRIES,
      maxMatches: MAX_GREP_MATCHES,
      maxFileBytes: MAX_GREP_FILE_BYTES,
      maxTotalBytes: MAX_GREP_TOTAL_BYTES,
    });
    if (isFailure(r)) return fail(r.error);
    const note = [
      r.stoppedAtBytes ? `\n(the search stopped after reading ${MAX_GREP_TOTAL_BYTES} bytes; narrow path)` : '',
      r.truncated ? `\n(the search stopped after ${MAX_WALK_ENTRIES} entries; narrow path)` : '',
    ].join('');
    if (r.total === 0) return ok(`no matches${note}`);
    return ok(r.lines.join('\n') + (r.total > r.lines.length ? `\n(${r.total - r.lines.length} more matches not shown)` : '') + note);
  },
};
