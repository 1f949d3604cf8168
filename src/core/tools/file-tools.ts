/**
 * read, write, edit, glob, grep: the file tools, confined to the sandbox's
 * mounts by VirtualFs (symlinks resolved; escapes refused). Paths in and out
 * are sandbox paths (/workspace/...), never host paths.
 */
import fs from 'node:fs';
import path from 'node:path';
import fg from 'fast-glob';
import { EditInput, GlobInput, GrepInput, ReadInput, WriteInput } from '../schema/index.js';
import { PathError } from '../sandbox/virtual-fs.js';
import { grepOffThread, GREP_TIMEOUT_MS } from './grep-worker.js';
import { fail, ok, type Tool, type ToolContext, type ToolOutput } from './tool.js';

const MAX_GLOB_RESULTS = 1000;
const MAX_GREP_MATCHES = 500;
const MAX_GREP_FILE_BYTES = 5 * 1024 * 1024;

function guard(fn: () => ToolOutput): ToolOutput {
  try {
    return fn();
  } catch (e) {
    if (e instanceof PathError || e instanceof NotRegular) return fail(e.message);
    const err = e as NodeJS.ErrnoException;
    if (err.code === 'ENXIO') return fail('not a regular file');
    if (err.code === 'ENOENT') return fail(`no such file or directory`);
    if (err.code === 'EISDIR') return fail(`is a directory`);
    if (err.code === 'ENOTDIR') return fail(`a parent is not a directory`);
    return fail(err.message);
  }
}

function isBinary(buf: Buffer): boolean {
  return buf.subarray(0, 8000).includes(0);
}

class NotRegular extends Error {}

/**
 * Reads a regular file without ever blocking: a FIFO or device opened for
 * reading would hang the daemon's only thread, so the open is non-blocking
 * and anything that is not a regular file is refused.
 */
export function readRegular(host: string, virtual: string): Buffer {
  const fd = fs.openSync(host, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  try {
    if (!fs.fstatSync(fd).isFile()) throw new NotRegular(`${virtual} is not a regular file`);
    return fs.readFileSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** Writes a regular file (created if missing); refuses FIFOs and devices the same way. */
export function writeRegular(host: string, virtual: string, data: string): void {
  const fd = fs.openSync(host, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_NONBLOCK, 0o644);
  try {
    if (!fs.fstatSync(fd).isFile()) throw new NotRegular(`${virtual} is not a regular file`);
    fs.ftruncateSync(fd, 0);
    fs.writeFileSync(fd, data);
  } finally {
    fs.closeSync(fd);
  }
}

export const readTool: Tool<typeof ReadInput> = {
  name: 'read',
  description:
    'Read a file (numbered lines) or list a directory. Paths are /workspace/... (or relative to it); /runtime holds your runtime facts, read-only.',
  input: ReadInput,
  async run(input, ctx) {
    return guard(() => {
      const r = ctx.vfs.resolve(input.file_path);
      const st = fs.statSync(r.host);
      if (st.isDirectory()) {
        const entries = fs.readdirSync(r.host, { withFileTypes: true }).map((d) => `${d.name}${d.isDirectory() ? '/' : ''}`).sort();
        return ok(entries.length ? entries.join('\n') : '(empty directory)');
      }
      const buf = readRegular(r.host, r.virtual);
      if (isBinary(buf)) return ok(`(binary file, ${buf.length} bytes)`);
      const lines = buf.toString('utf8').split('\n');
      if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
      let [from, to] = input.view_range ?? [1, 0];
      if (to <= 0 || to > lines.length) to = lines.length;
      if (from > lines.length && lines.length > 0) return fail(`view_range starts at line ${from}, but ${r.virtual} has ${lines.length} lines`);
      const width = String(to).length;
      const out = lines.slice(from - 1, to).map((l, i) => `${String(from + i).padStart(width)}\t${l}`);
      return ok(out.length ? out.join('\n') : '(empty file)');
    });
  },
};

export const writeTool: Tool<typeof WriteInput> = {
  name: 'write',
  description: 'Create or overwrite a whole file inside /workspace (parent directories are created).',
  input: WriteInput,
  async run(input, ctx) {
    return guard(() => {
      const r = ctx.vfs.resolve(input.file_path, { write: true });
      fs.mkdirSync(path.dirname(r.host), { recursive: true });
      // Re-check after mkdir: a directory made meanwhile must not lead outside.
      const again = ctx.vfs.resolve(input.file_path, { write: true });
      writeRegular(again.host, again.virtual, input.content);
      return ok(`wrote ${Buffer.byteLength(input.content)} bytes to ${again.virtual}`);
    });
  },
};

export const editTool: Tool<typeof EditInput> = {
  name: 'edit',
  description: 'Replace exact text in a file inside /workspace. old_string must occur exactly once unless replace_all is true.',
  input: EditInput,
  async run(input, ctx) {
    return guard(() => {
      const r = ctx.vfs.resolve(input.file_path, { write: true });
      const text = readRegular(r.host, r.virtual).toString('utf8');
      const count = text.split(input.old_string).length - 1;
      if (count === 0) return fail(`old_string was not found in ${r.virtual}`);
      if (count > 1 && !input.replace_all) return fail(`old_string occurs ${count} times in ${r.virtual}; give more context or set replace_all`);
      const next = input.replace_all ? text.split(input.old_string).join(input.new_string) : text.replace(input.old_string, () => input.new_string);
      writeRegular(r.host, r.virtual, next);
      return ok(`replaced ${input.replace_all ? count : 1} occurrence(s) in ${r.virtual}`);
    });
  },
};

function searchRoot(ctx: ToolContext, p: string | undefined) {
  const r = ctx.vfs.resolve(p ?? '/workspace');
  return r;
}

export const globTool: Tool<typeof GlobInput> = {
  name: 'glob',
  description: 'Find files by a glob pattern (e.g. **/*.md), newest first.',
  input: GlobInput,
  async run(input, ctx) {
    if (input.pattern.split('/').includes('..') || input.pattern.startsWith('/')) {
      return fail(`pattern ${JSON.stringify(input.pattern)} must be relative and must not contain ..; use path to choose the directory`);
    }
    let root;
    try {
      root = searchRoot(ctx, input.path);
    } catch (e) {
      return fail((e as Error).message);
    }
    const found = (await fg(input.pattern, { cwd: root.host, dot: true, onlyFiles: true, followSymbolicLinks: false, stats: true, suppressErrors: true }))
      // Brace expansion can smuggle in an absolute or ../ alternative: keep only what lies under the root.
      .filter((e) => !path.isAbsolute(e.path) && !e.path.split('/').includes('..'));
    const sorted = found.sort((a, b) => (b.stats?.mtimeMs ?? 0) - (a.stats?.mtimeMs ?? 0));
    const list = sorted.slice(0, MAX_GLOB_RESULTS).map((e) => path.posix.join(root.virtual, e.path));
    if (list.length === 0) return ok('no files matched');
    const more = sorted.length > MAX_GLOB_RESULTS ? `\n(${sorted.length - MAX_GLOB_RESULTS} more not shown)` : '';
    return ok(list.join('\n') + more);
  },
};

export const grepTool: Tool<typeof GrepInput> = {
  name: 'grep',
  description: 'Search file contents with a regular expression (JavaScript syntax); prints path:line:text.',
  input: GrepInput,
  async run(input, ctx) {
    try {
      new RegExp(input.pattern);
    } catch (e) {
      return fail(`pattern is not a valid regular expression: ${(e as Error).message}`);
    }
    let root;
    try {
      root = searchRoot(ctx, input.path);
    } catch (e) {
      return fail((e as Error).message);
    }
    const st = fs.statSync(root.host, { throwIfNoEntry: false });
    if (!st) return fail(`${root.virtual}: no such file or directory`);
    const candidates = st.isDirectory()
      ? (await fg('**/*', { cwd: root.host, dot: true, onlyFiles: true, followSymbolicLinks: false, suppressErrors: true })).sort().map((f) => path.posix.join(root.virtual, f))
      : [root.virtual];
    // Only regular files that resolve inside the mounts (a symlink must not lead the search out).
    const files: Array<{ host: string; virtual: string }> = [];
    for (const v of candidates) {
      try {
        const r = ctx.vfs.resolve(v);
        const fst = fs.statSync(r.host);
        if (fst.isFile() && fst.size <= MAX_GREP_FILE_BYTES) files.push({ host: r.host, virtual: v });
      } catch {
        // vanished, or outside: skip
      }
    }
    const r = await grepOffThread(input.pattern, files, { maxMatches: MAX_GREP_MATCHES, timeoutMs: Math.min(ctx.shellTimeoutMs, GREP_TIMEOUT_MS), signal: ctx.signal });
    if ('error' in r) return fail(r.error);
    if (r.total === 0) return ok('no matches');
    return ok(r.lines.join('\n') + (r.total > r.lines.length ? `\n(${r.total - r.lines.length} more matches not shown)` : ''));
  },
};
