/**
 * An in-memory Sandbox for unit tests of the tools (like the scripted model
 * for the model port): files in a Map keyed by sandbox path, directories
 * implied by the files below them or made explicitly, and commands answered
 * by a function the test supplies. Fast, deterministic, no host at all.
 *
 * It answers as the host sandbox does, message for message, for what it
 * models: paths relative to /workspace, `..`, mounts (default /workspace
 * read-write, /runtime read-only), "outside the workspace", "is read-only",
 * ENOENT / ENOTDIR / EISDIR, listings, glob and grep with the same pattern
 * rules (./search-patterns.ts) and the same walk order.
 * tests/core/sandbox-contract.test.ts holds the two to that.
 *
 * What it does not model: symlinks, FIFOs and devices, permissions, host
 * paths (hideHostPaths returns its text), and deadlines (glob and grep
 * match in-process, at once; only an aborted signal stops them).
 */
import path from 'node:path';
import { systemClock, type Clock } from '../foundation/clock.js';
import {
  failure,
  type Change,
  type ExecOptions,
  type ExecResult,
  type FileContent,
  type GlobMatch,
  type GlobResult,
  type GrepOptions,
  type GrepResult,
  type Listing,
  type ListOptions,
  type Modified,
  type OpOptions,
  type ReadOptions,
  type Sandbox,
  type SandboxFailure,
  type SearchOptions,
  type Written,
} from './sandbox.js';
import { compileGlob, isBinary, refuseGrepPattern } from './search-patterns.js';

const P = path.posix;
const HOME = '/workspace';

export interface MemoryMount {
  /** Absolute sandbox path, e.g. /workspace. */
  target: string;
  writable: boolean;
  /** The largest file write and edit put here, as on the host (MountSpec.maxFileBytes). */
  maxFileBytes?: number;
}

/**
 * How a test's command handler answers: the output of a command that
 * exited 0, the fields of an ExecResult that differ from that (cwd: where
 * the shell now stands), or a failure (the shell could not run).
 */
export type ExecAnswer = string | Partial<ExecResult> | SandboxFailure;

export type MemoryExec = (command: string, o: ExecOptions & { cwd: string; sandbox: MemorySandbox }) => ExecAnswer | Promise<ExecAnswer>;

export interface MemorySandboxOptions {
  /** Files to start with: sandbox path (absolute, or relative to /workspace) → content. Read-only mounts may be seeded. */
  files?: Record<string, string | Uint8Array>;
  /** Empty directories to start with. */
  dirs?: string[];
  /** Default: /workspace (read-write) and /runtime (read-only). */
  mounts?: MemoryMount[];
  /** Answers exec; without one, exec and restart fail with "no shell in the memory sandbox". */
  exec?: MemoryExec;
  /** Stamps each file's mtime when it is written (glob lists newest first). Default: the system clock. */
  clock?: Pick<Clock, 'now'>;
}

interface MemoryFile {
  data: Buffer;
  mtimeMs: number;
}

/** Where a path led: its sandbox path and what is there (null: nothing yet, for a write to create). */
type Resolved = { virtual: string; kind: 'file' | 'dir' | null };

export class MemorySandbox implements Sandbox {
  private readonly files = new Map<string, MemoryFile>();
  private readonly dirs = new Set<string>();
  private readonly mounts: MemoryMount[];
  private readonly clock: Pick<Clock, 'now'>;
  private cwd = HOME;
  private closes = 0;

  constructor(private readonly o: MemorySandboxOptions = {}) {
    const mounts = o.mounts ?? [
      { target: HOME, writable: true },
      { target: '/runtime', writable: false },
    ];
    // Longest target first, as the host orders them: a nested mount wins, and messages list roots in that order.
    this.mounts = mounts.map((m) => ({ ...m, target: P.normalize(m.target).replace(/\/+$/, '') || '/' })).sort((a, b) => b.target.length - a.target.length);
    this.clock = o.clock ?? systemClock;
    for (const d of o.dirs ?? []) for (let v = absolute(d); v !== '/' && !this.isMountRoot(v); v = P.dirname(v)) this.dirs.add(v);
    for (const [p, content] of Object.entries(o.files ?? {})) this.put(absolute(p), content);
  }

  /** A file's text (for assertions), or undefined when there is no such file. */
  text(p: string): string | undefined {
    return this.files.get(absolute(p))?.data.toString('utf8');
  }

  /** Every file's sandbox path, sorted. */
  paths(): string[] {
    return [...this.files.keys()].sort();
  }

  /** How many times close() was called (a run closes its sandbox once, when it ends). */
  get closeCount(): number {
    return this.closes;
  }

  async exec(command: string, o: ExecOptions): Promise<ExecResult | SandboxFailure> {
    if (!this.o.exec) return noShell();
    const a = await this.o.exec(command, { ...o, cwd: this.cwd, sandbox: this });
    if (typeof a === 'object' && 'error' in a) return a;
    const r: ExecResult = { output: '', exitCode: 0, timedOut: false, interrupted: false, shellDied: false, cwd: this.cwd, ...(typeof a === 'string' ? { output: a } : a) };
    if (!r.shellDied) this.cwd = r.cwd;
    return r;
  }

  /** Answered by the same handler, from /workspace; the persistent shell's cwd is neither used nor changed. */
  async execFresh(command: string, o: ExecOptions): Promise<ExecResult | SandboxFailure> {
    if (!this.o.exec) return noShell();
    const a = await this.o.exec(command, { ...o, cwd: HOME, sandbox: this });
    if (typeof a === 'object' && 'error' in a) return a;
    return { output: '', exitCode: 0, timedOut: false, interrupted: false, shellDied: false, cwd: HOME, ...(typeof a === 'string' ? { output: a } : a) };
  }

  async restart(_o: OpOptions): Promise<SandboxFailure | null> {
    if (!this.o.exec) return noShell();
    this.cwd = HOME;
    return null;
  }

  async read(p: string, o: ReadOptions): Promise<FileContent | SandboxFailure> {
    const r = this.resolve(p, {});
    if ('error' in r) return r;
    if (r.kind === 'dir') return failure('EISDIR', `${r.virtual}: is a directory`);
    const f = this.files.get(r.virtual) as MemoryFile;
    return { virtual: r.virtual, data: f.data.length > o.maxBytes ? null : Buffer.from(f.data) };
  }

  async write(p: string, content: string, _o: OpOptions): Promise<Written | SandboxFailure> {
    const r = this.resolve(p, { write: true, parents: true });
    if ('error' in r) return r;
    if (r.kind === 'dir') return failure('not_regular', `${r.virtual} is not a regular file`); // a mount's root (the walk refuses other directories)
    const big = this.tooLarge(r.virtual, content);
    if (big) return big;
    return { virtual: r.virtual, bytes: this.put(r.virtual, content) };
  }

  async modify(p: string, change: Change, o: ReadOptions): Promise<Modified | SandboxFailure> {
    const r = this.resolve(p, { modify: true });
    if ('error' in r) return r;
    if (r.kind === 'dir') return failure('not_regular', `${r.virtual} is not a regular file`);
    const f = this.files.get(r.virtual) as MemoryFile;
    const next = change(f.data.length > o.maxBytes ? null : Buffer.from(f.data), r.virtual);
    if (next === null) return { virtual: r.virtual, written: false };
    const big = this.tooLarge(r.virtual, next);
    if (big) return big;
    this.put(r.virtual, next);
    return { virtual: r.virtual, written: true };
  }

  async list(p: string, o: ListOptions): Promise<Listing | SandboxFailure> {
    const r = this.resolve(p, {});
    if ('error' in r) return r;
    if (r.kind !== 'dir') return failure('ENOTDIR', `${r.virtual}: not a directory`);
    const names = this.children(r.virtual)
      .map((c) => (c.dir ? `${c.name}/` : c.name))
      .sort();
    return { virtual: r.virtual, names: names.slice(0, o.max), more: names.length > o.max };
  }

  async glob(pattern: string, o: SearchOptions): Promise<GlobResult | SandboxFailure> {
    const root = this.resolve(o.path ?? HOME, {});
    if ('error' in root) return root;
    if (root.kind !== 'dir') return failure('not_directory', `${root.virtual} is not a directory`);
    const re = compileGlob(pattern);
    if (typeof re === 'string') return failure('invalid_pattern', re);
    const files: GlobMatch[] = [];
    const walked = this.walk(root.virtual, o, (virtual, rel, f) => {
      if (re.test(rel)) files.push({ virtual, mtimeMs: f.mtimeMs });
      return true;
    });
    if (o.signal.aborted) return failure('interrupted', 'glob was interrupted');
    return { files, truncated: walked.truncated };
  }

  async grep(pattern: string, o: GrepOptions): Promise<GrepResult | SandboxFailure> {
    const refused = refuseGrepPattern(pattern);
    if (refused) return failure('invalid_pattern', refused);
    const root = this.resolve(o.path ?? HOME, {});
    if ('error' in root) return root;
    const re = new RegExp(pattern);
    const lines: string[] = [];
    let total = 0;
    let bytes = 0;
    let stoppedAtBytes = false;
    const feed = (virtual: string, f: MemoryFile): boolean => {
      if (f.data.length > o.maxFileBytes) return true;
      if (bytes + f.data.length > o.maxTotalBytes) {
        stoppedAtBytes = true;
        return false;
      }
      bytes += f.data.length;
      if (isBinary(f.data)) return true;
      f.data
        .toString('utf8')
        .split('\n')
        .forEach((line, i) => {
          if (!re.test(line)) return;
          total++;
          if (lines.length < o.maxMatches) lines.push(`${virtual}:${i + 1}:${line}`);
        });
      return true;
    };
    let truncated = false;
    if (root.kind === 'dir') ({ truncated } = this.walk(root.virtual, o, (virtual, _rel, f) => feed(virtual, f)));
    else feed(root.virtual, this.files.get(root.virtual) as MemoryFile);
    if (o.signal.aborted) return failure('interrupted', 'grep was interrupted');
    return { lines, total, stoppedAtBytes, truncated };
  }

  hideHostPaths(text: string): string {
    return text;
  }

  close(): void {
    this.closes++;
  }

  /** Stores a file (no checks: for seeding and for writes already resolved); returns its size. */
  private put(virtual: string, content: string | Uint8Array): number {
    const data = typeof content === 'string' ? Buffer.from(content, 'utf8') : Buffer.from(content);
    this.files.set(virtual, { data, mtimeMs: this.clock.now() });
    for (let d = P.dirname(virtual); d !== '/' && !this.isMountRoot(d); d = P.dirname(d)) this.dirs.add(d);
    return data.length;
  }

  /** The host's `too_large` failure (./atomic-replace.ts) for content over the mount's maxFileBytes. */
  private tooLarge(virtual: string, content: string): SandboxFailure | null {
    const max = this.mountOf(virtual)?.maxFileBytes;
    const bytes = Buffer.byteLength(content);
    if (max === undefined || bytes <= max) return null;
    return failure('too_large', `${virtual}: ${bytes} bytes is more than a document here may hold (${max} bytes); nothing was written. Split it into smaller documents or shorten it.`);
  }

  private mountOf(v: string): MemoryMount | null {
    for (const m of this.mounts) if (v === m.target || v.startsWith(`${m.target}/`)) return m;
    return null;
  }

  private isMountRoot(v: string): boolean {
    return this.mounts.some((m) => m.target === v);
  }

  private kindOf(v: string): 'file' | 'dir' | null {
    if (this.files.has(v)) return 'file';
    return this.dirs.has(v) || this.isMountRoot(v) ? 'dir' : null;
  }

  private describeRoots(writing: boolean): string {
    return this.mounts
      .filter((m) => !writing || m.writable)
      .map((m) => m.target)
      .join(', ');
  }

  /**
   * Where `input` leads, step by step as the host's walk goes (see
   * VirtualFs.open), with the same refusals and errors: every missing or
   * wrong step named by its sandbox path. With `parents`, missing
   * directories on the way are made.
   */
  private resolve(input: string, o: { write?: boolean; modify?: boolean; parents?: boolean }): Resolved | SandboxFailure {
    if (input.includes('\0')) return failure('refused', `${JSON.stringify(input)}: a path must not contain NUL`);
    const writing = o.write === true || o.modify === true;
    const comps = absolute(input).split('/').filter(Boolean);
    const chain = ['/'];
    for (let i = 0; i < comps.length; i++) {
      const comp = comps[i] as string;
      const last = i === comps.length - 1;
      if (comp === '.') continue;
      if (comp === '..') {
        if (chain.length > 1) chain.pop();
        continue;
      }
      const next = P.join(chain[chain.length - 1] as string, comp);
      const m = this.mountOf(next);
      if (!m) {
        const prefix = `${next}/`;
        if (this.mounts.some((x) => x.target.startsWith(prefix))) {
          chain.push(next);
          continue;
        }
        return failure('refused', `${input}: outside the workspace (${next} is not under ${this.describeRoots(writing)})`);
      }
      if (next !== m.target) {
        if (writing && (last || o.parents) && !m.writable) return failure('refused', `${input}: ${m.target} is read-only`);
        const kind = this.kindOf(next);
        if (!last && kind === 'file') return failure('ENOTDIR', `${next}: not a directory`);
        if (!last && kind === null && o.write && o.parents) this.dirs.add(next);
        else if (kind === null && !(last && o.write)) return failure('ENOENT', `${next}: no such file or directory`);
        if (last && kind === 'dir' && writing) return failure('EISDIR', `${next}: is a directory`);
      }
      chain.push(next);
    }
    const end = chain[chain.length - 1] as string;
    const mount = this.mountOf(end);
    if (!mount) return failure('refused', `${input}: outside the workspace (resolves to ${end}, which is not under ${this.describeRoots(writing)})`);
    if (writing && !mount.writable) return failure('refused', `${input}: ${mount.target} is read-only`);
    return { virtual: end, kind: this.kindOf(end) };
  }

  /** The entries directly in directory `dir`: files, directories, and mounts that lie there. */
  private children(dir: string): Array<{ name: string; dir: boolean }> {
    const prefix = dir === '/' ? '/' : `${dir}/`;
    const out = new Map<string, boolean>();
    const add = (v: string, isDir: boolean) => {
      if (!v.startsWith(prefix) || v === dir) return;
      const rest = v.slice(prefix.length);
      const name = rest.split('/')[0] as string;
      out.set(name, out.get(name) === true || isDir || rest.includes('/'));
    };
    for (const v of this.files.keys()) add(v, false);
    for (const v of this.dirs) add(v, true);
    for (const m of this.mounts) add(m.target, true);
    return [...out].map(([name, isDir]) => ({ name, dir: isDir }));
  }

  /**
   * Visits the files under `root` as the host's walk does: depth first,
   * names sorted, every entry (file or directory) counted against
   * maxEntries. `visit` returns false to stop. Stops when the signal aborts.
   */
  private walk(root: string, o: SearchOptions, visit: (virtual: string, rel: string, f: MemoryFile) => boolean): { truncated: boolean } {
    let seen = 0;
    let truncated = false;
    const descend = (dir: string, rel: string): boolean => {
      const entries = this.children(dir).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      for (const e of entries) {
        if (o.signal.aborted) return false;
        if (++seen > o.maxEntries) {
          truncated = true;
          return false;
        }
        const v = P.join(dir, e.name);
        const r = rel ? `${rel}/${e.name}` : e.name;
        if (e.dir) {
          if (!descend(v, r)) return false;
        } else if (!visit(v, r, this.files.get(v) as MemoryFile)) return false;
      }
      return true;
    };
    descend(root, '');
    return { truncated };
  }
}

/** A sandbox path, absolute (relative paths are relative to /workspace), normalised. */
function absolute(input: string): string {
  return P.normalize(P.isAbsolute(input) ? input : P.join(HOME, input));
}

const noShell = () => failure('no_shell', 'no shell in the memory sandbox (give MemorySandbox an exec handler to answer commands)');
