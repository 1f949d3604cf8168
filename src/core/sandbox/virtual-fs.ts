/**
 * The file side of the host sandbox (./host-sandbox.ts): read, write,
 * modify, list, glob and grep run in the daemon, on the host. Paths are interpreted in the sandbox's namespace
 * — /workspace, /runtime and the environment's mounts — and symlinks are
 * followed the way the sandbox would see them: a link made inside the
 * sandbox to /workspace/x points at the session's workspace, not at the
 * host's /workspace. Any step that leaves every mount is refused, whether by
 * `..`, an absolute path, a symlinked file or a symlinked directory. Writes
 * are allowed only under writable mounts.
 *
 * Checking and using are one operation. The agent's shell can change the
 * workspace while a tool runs (swap a directory and a symlink in a loop), so
 * a path is never checked and then opened again by name. Instead it is
 * walked one component at a time from an open descriptor of the mount's
 * root, each step an openat() of a single name with O_NOFOLLOW, relative to
 * the descriptor of the step before (see ./beneath.ts). A symlink met on the
 * way fails that open (ELOOP); its text is read from the same directory
 * descriptor and resolved here, in sandbox terms, from the mount roots.
 * What the host sandbox then reads or writes is the descriptor the walk
 * ended on. Whatever the shell renames meanwhile, no step can land outside
 * a mount: the only way up is `..`, which this module resolves itself,
 * never the kernel.
 *
 * The guarantee holds in every isolation posture (bubblewrap, unshare-net,
 * unconfined), because it does not depend on the sandbox at all. The shell
 * is confined by its sandbox (bwrap), not by this module.
 */
import fs from 'node:fs';
import path from 'node:path';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { HostPaths, realOrSelf } from './host-paths.js';
import { at, closeQuietly, fdPath, FileError, fileError, openMountRoot, PathError, DIR_FLAGS, READ_FLAGS, WRITE_FLAGS, EDIT_FLAGS } from './beneath.js';
import { kindAt, kindOf, rawAt, readEntries, readRawEntries, walkName } from './dir-entries.js';

export { PathError, FileError } from './beneath.js';
export { mountinfoEscape } from './host-paths.js';

export interface VirtualMount {
  /** Absolute path in the sandbox, e.g. /workspace. */
  target: string;
  /** Absolute host path it maps to. */
  host: string;
  writable: boolean;
  /** Writes replace files whole (temp + rename): see MountSpec.atomic (./isolation.ts) and ./atomic-replace.ts. */
  atomic?: boolean;
  /** The largest file the file tools write here. */
  maxFileBytes?: number;
}

/** An open file or directory inside a mount. The caller closes `fd` (or calls close()). */
export interface Opened {
  fd: number;
  /** Where the walk ended, as the sandbox sees it. */
  virtual: string;
  mount: VirtualMount;
  stat: fs.Stats;
  close(): void;
}

export interface OpenOptions {
  /** Open for writing: the file is created when missing; refused on read-only mounts. */
  write?: boolean;
  /** Open an existing file for reading and writing (edit); refused on read-only mounts. */
  modify?: boolean;
  /** Create missing parent directories (with `write`). */
  parents?: boolean;
  /** Open a directory (with `write` and `parents`: created when missing), for writing beneath it. */
  directory?: boolean;
}

/** One file met by walk(). */
export interface WalkEntry {
  /**
   * Path relative to the walk's root, with "/" separators. A name that is
   * not valid UTF-8 is shown with each byte from 0x80 up as `\xHH` (see
   * walkName): two different files can then share a `rel` (one whose name
   * really is that text), which the caller must treat as ambiguous.
   */
  rel: string;
  /** Sandbox path. */
  virtual: string;
  stat: fs.Stats;
  /** Opens the file for reading, race-free (by name in its directory's descriptor, O_NOFOLLOW). */
  open(): number;
  /** Unlinks the name in its directory's descriptor (whatever it is now; a directory is not removed). */
  remove(): void;
}

const MAX_LINKS = 40;
/** Components one open may walk, links followed (PATH_MAX is 4096 bytes, so at most ~2048 real ones). */
const MAX_STEPS = 4096;
/** Entries `read` lists of one directory. */
const MAX_LIST = 2000;
/** Looks again at a step that changed under the walk (a racing rename) at most this often per open. */
const MAX_RETRIES = 20;
/** Directory depth a walk descends to (each level holds one descriptor open). */
const MAX_WALK_DEPTH = 64;
const P = path.posix;

interface Step {
  /** Sandbox path of this step. */
  v: string;
  /** Descriptor of the directory or file; null for a directory that exists only because a mount lies below it (/, /mnt for /mnt/x). */
  fd: number | null;
  mount: VirtualMount | null;
}

export interface VirtualFsOptions {
  /** Where relative paths start (default /workspace). */
  home?: string;
  /**
   * Whether hideHostPaths() rewrites host paths (true under bubblewrap,
   * where they do not exist for the agent; false where the shell runs on
   * the host and its host paths are its real ones).
   */
  hideHostPaths?: boolean;
}

export class VirtualFs {
  readonly mounts: VirtualMount[];
  readonly home: string;
  private readonly hostPaths: HostPaths;

  constructor(mounts: VirtualMount[], o: VirtualFsOptions = {}) {
    this.home = o.home ?? '/workspace';
    // Longest target first, so /workspace/sub mounts win over /workspace.
    this.mounts = mounts
      .map((m) => ({ ...m, target: P.normalize(m.target).replace(/\/+$/, '') || '/', host: realOrSelf(m.host) }))
      .sort((a, b) => b.target.length - a.target.length);
    this.hostPaths = new HostPaths(mounts, o.hideHostPaths === true);
  }

  /**
   * `text` with every mount's host path replaced by its sandbox path, for
   * what the model reads (a tool's output, an error); see ./host-paths.ts.
   */
  hideHostPaths(text: string): string {
    return this.hostPaths.hide(text);
  }

  /** Where a virtual path lives: its mount, or null when no mount covers it. */
  mountOf(v: string): VirtualMount | null {
    for (const m of this.mounts) if (v === m.target || v.startsWith(`${m.target}/`)) return m;
    return null;
  }

  /** A virtual directory that only exists because a mount is below it (/, /mnt for /mnt/x). */
  private isAncestorOfMount(v: string): boolean {
    const prefix = v === '/' ? '/' : `${v}/`;
    return this.mounts.some((m) => m.target.startsWith(prefix));
  }

  /** `input` as an absolute sandbox path (relative paths are relative to /workspace), normalised. */
  absolute(input: string): string {
    return P.normalize(P.isAbsolute(input) ? input : P.join(this.home, input));
  }

  /**
   * Opens what `input` names (absolute, or relative to /workspace), walking
   * beneath the mounts as described above. Throws PathError when the path
   * leaves the mounts, when a write lands on a read-only mount, or when a
   * symlink chain is too long; FileError (with a sandbox path) for what the
   * file system says (ENOENT, ENOTDIR, EISDIR, EACCES, ...).
   */
  open(input: string, o: OpenOptions = {}): Opened {
    if (input.includes('\0')) throw new PathError(`${JSON.stringify(input)}: a path must not contain NUL`);
    const writing = o.write === true || o.modify === true;
    let pending = split(this.absolute(input));
    const chain: Step[] = [{ v: '/', fd: null, mount: null }];
    const unwind = (to: number) => {
      while (chain.length > to) closeQuietly(chain.pop()?.fd ?? null);
    };
    let links = 0;
    let retries = 0;
    let steps = 0;
    try {
      while (pending.length) {
        // Each step may hold a descriptor: bound the steps, as the kernel bounds a path (PATH_MAX).
        if (++steps > MAX_STEPS) throw new PathError(`${input}: the path, with its links followed, is too long`);
        const comp = pending.shift() as string;
        if (comp === '.') continue;
        if (comp === '..') {
          if (chain.length > 1) unwind(chain.length - 1);
          continue;
        }
        const top = chain[chain.length - 1] as Step;
        const next = P.join(top.v, comp);
        const last = pending.length === 0;
        const m = this.mountOf(next);
        if (!m) {
          if (this.isAncestorOfMount(next)) {
            chain.push({ v: next, fd: null, mount: null });
            continue;
          }
          throw new PathError(`${input}: outside the workspace (${next} is not under ${this.describeRoots(writing)})`);
        }
        if (next === m.target) {
          chain.push({ v: next, fd: openMountRoot(m.host, next), mount: m });
          continue;
        }
        // `top` lies in `m` (see the module comment): it has a descriptor.
        const dirFd = top.fd as number;
        if (writing && (last || o.parents) && !m.writable) throw new PathError(`${input}: ${m.target} is read-only`);
        const flags = !last || o.directory ? DIR_FLAGS : o.modify ? EDIT_FLAGS : o.write ? WRITE_FLAGS : READ_FLAGS;
        let fd: number;
        try {
          fd = fs.openSync(at(dirFd, comp), flags, 0o644);
        } catch (e) {
          const code = (e as NodeJS.ErrnoException).code;
          const kind = code === 'ELOOP' || (code === 'ENOTDIR' && !last) ? kindAt(dirFd, comp) : null;
          if (kind === 'directory' || (code === 'ELOOP' && kind !== 'symlink')) {
            // It changed between the open and the look (a rename raced us): look again, a bounded number of times.
            if (++retries > MAX_RETRIES) throw new FileError('EAGAIN', `${next}: kept changing while it was opened; try again`);
            pending.unshift(comp);
            continue;
          }
          if (kind === 'symlink') {
            // A symlink: read its text from the same directory and resolve it here, in sandbox terms.
            let target: string;
            try {
              target = fs.readlinkSync(at(dirFd, comp));
            } catch (e2) {
              const c2 = (e2 as NodeJS.ErrnoException).code;
              if ((c2 === 'EINVAL' || c2 === 'ENOENT') && ++retries <= MAX_RETRIES) {
                pending.unshift(comp); // no longer a symlink: look again
                continue;
              }
              throw fileError(e2, next);
            }
            if (++links > MAX_LINKS) throw new PathError(`${input}: too many levels of symbolic links`);
            if (P.isAbsolute(target)) unwind(1);
            pending = [...split(target), ...pending];
            continue;
          }
          if (code === 'ENOENT' && (!last || o.directory === true) && o.write && o.parents) {
            try {
              fs.mkdirSync(at(dirFd, comp), 0o755);
            } catch (e2) {
              if ((e2 as NodeJS.ErrnoException).code !== 'EEXIST') throw fileError(e2, next);
            }
            pending.unshift(comp); // open what is there now (a directory, or whatever raced in)
            continue;
          }
          if (code === 'ENOTDIR' && !last) throw new FileError('ENOTDIR', `${next}: not a directory`);
          throw fileError(e, next);
        }
        chain.push({ v: next, fd, mount: m });
      }
      const end = chain[chain.length - 1] as Step;
      if (end.fd === null || !end.mount) throw new PathError(`${input}: outside the workspace (resolves to ${end.v}, which is not under ${this.describeRoots(writing)})`);
      if (writing && !end.mount.writable) throw new PathError(`${input}: ${end.mount.target} is read-only`);
      const stat = fs.fstatSync(end.fd);
      chain.pop();
      const fd = end.fd;
      return { fd, virtual: end.v, mount: end.mount, stat, close: () => closeQuietly(fd) };
    } finally {
      unwind(0);
    }
  }

  /**
   * Entries of an open directory, names with a trailing "/" for directories,
   * sorted; at most `max` of them (read one by one, so a directory of a
   * million entries costs no more than `max`), and whether there were more.
   */
  list(dir: Opened, max = MAX_LIST): { names: string[]; more: boolean } {
    const entries = readEntries(fdPath(dir.fd), max + 1);
    const more = entries.length > max;
    const names = entries
      .slice(0, max)
      .map((d) => `${d.name}${d.isDirectory() || this.mountOf(P.join(dir.virtual, d.name))?.target === P.join(dir.virtual, d.name) ? '/' : ''}`)
      .sort();
    return { names, more };
  }

  /**
   * Visits every regular file under the open directory `root` (depth first,
   * names sorted), without following symlinks, crossing into mounts that lie
   * below it as the sandbox shows them. Each directory is entered by name
   * from its parent's descriptor with O_NOFOLLOW, so nothing the shell swaps
   * in meanwhile leads the walk outside. `visit` returns false to stop.
   * Yields to the event loop now and then; stops when `signal` aborts.
   * Names are read as bytes and opened as bytes, so a name that is not
   * valid UTF-8 is visited too (its `rel` escaped, see walkName). Returns
   * how many entries were looked at, whether it stopped at maxEntries
   * (`truncated`), whether a directory deeper than MAX_WALK_DEPTH was left
   * out (`tooDeep`), whether it stopped because `signal` aborted or `stop()`
   * said so (`stopped`; stop is asked before each entry), and how many
   * entries changed under it (`changed`): listed as one kind and found
   * another, gone between the listing and the look, or a directory that
   * could not be entered. It never looks again at such an entry (a shell
   * can keep swapping it for as long as the walk would retry); any of these
   * means not every file was visited.
   */
  async walk(root: Opened, visit: (e: WalkEntry) => boolean | Promise<boolean>, o: { signal?: AbortSignal; stop?: () => boolean; maxEntries: number }): Promise<{ seen: number; truncated: boolean; tooDeep: boolean; stopped: boolean; changed: number }> {
    let seen = 0;
    let truncated = false;
    let tooDeep = false;
    let stopped = false;
    let changed = 0;
    const descend = async (dirFd: number, virtual: string, rel: string, depth: number): Promise<boolean> => {
      let raw: Array<fs.Dirent<Buffer>>;
      try {
        // No more entries than the walk may still look at (+1, to know it stopped short).
        raw = readRawEntries(fdPath(dirFd), o.maxEntries - seen + 1).sort((a, b) => Buffer.compare(a.name, b.name));
      } catch {
        return true; // vanished or unreadable: skip it
      }
      for (const dr of raw) {
        const bytes = dr.name;
        const d = { name: walkName(bytes) };
        const here = () => rawAt(dirFd, bytes);
        if (o.signal?.aborted || o.stop?.()) {
          stopped = true;
          return false;
        }
        if (++seen > o.maxEntries) {
          truncated = true;
          return false;
        }
        if (seen % 512 === 0) await yieldToLoop();
        const v = P.join(virtual, d.name);
        const r = rel ? `${rel}/${d.name}` : d.name;
        const sub = this.mountOf(v);
        if (sub && sub.target === v) {
          // A mount below the root: the sandbox shows the mount, not what lies under it on the host.
          if (depth >= MAX_WALK_DEPTH) {
            tooDeep = true;
            continue;
          }
          let fd: number;
          try {
            fd = openMountRoot(sub.host, v);
          } catch {
            continue;
          }
          try {
            if (!(await descend(fd, v, r, depth + 1))) return false;
          } finally {
            closeQuietly(fd);
          }
          continue;
        }
        let st: fs.Stats;
        try {
          st = fs.lstatSync(here());
        } catch {
          changed += 1; // gone since the listing (or renamed away: it may be elsewhere, unseen)
          continue;
        }
        const listed = kindOf(dr);
        if (listed !== null && listed !== kindOf(st)) changed += 1;
        if (st.isDirectory()) {
          if (depth >= MAX_WALK_DEPTH) {
            tooDeep = true;
            continue;
          }
          let fd: number;
          try {
            fd = fs.openSync(here(), DIR_FLAGS);
          } catch {
            changed += 1; // swapped for a symlink or removed meanwhile: not followed
            continue;
          }
          try {
            if (!(await descend(fd, v, r, depth + 1))) return false;
          } finally {
            closeQuietly(fd);
          }
        } else if (st.isFile()) {
          const entry: WalkEntry = { rel: r, virtual: v, stat: st, open: () => fs.openSync(here(), READ_FLAGS), remove: () => fs.unlinkSync(here()) };
          if (!(await visit(entry))) return false;
        }
      }
      return true;
    };
    await descend(root.fd, root.virtual, '', 0);
    return { seen, truncated, tooDeep, stopped, changed };
  }

  private describeRoots(write?: boolean): string {
    const roots = this.mounts.filter((m) => !write || m.writable).map((m) => m.target);
    return roots.join(', ');
  }
}

function split(p: string): string[] {
  return p.split('/').filter(Boolean);
}
