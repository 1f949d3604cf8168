/**
 * Path confinement for the daemon's own file tools (read, write, edit, glob,
 * grep). Paths are interpreted in the sandbox's namespace — /workspace,
 * /runtime and the environment's mounts — and resolved component by
 * component, following symlinks the way the sandbox would see them: a link
 * made inside the sandbox to /workspace/x points at the session's workspace,
 * not at the host's /workspace. Any step that leaves every mount is refused,
 * whether by `..`, an absolute path, a symlinked file or a symlinked
 * directory. Writes are allowed only under writable mounts.
 *
 * This protects the file tools only. The shell is confined by its sandbox
 * (bwrap), not by this module.
 */
import fs from 'node:fs';
import path from 'node:path';

export interface VirtualMount {
  /** Absolute path in the sandbox, e.g. /workspace. */
  target: string;
  /** Absolute host path it maps to. */
  host: string;
  writable: boolean;
}

export class PathError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PathError';
  }
}

export interface Resolved {
  /** The resolved path as the sandbox sees it. */
  virtual: string;
  /** The same file on the host. */
  host: string;
  mount: VirtualMount;
}

const MAX_LINKS = 40;
const P = path.posix;

export class VirtualFs {
  readonly mounts: VirtualMount[];

  constructor(mounts: VirtualMount[], readonly home = '/workspace') {
    // Longest target first, so /workspace/sub mounts win over /workspace.
    this.mounts = mounts
      .map((m) => ({ ...m, target: P.normalize(m.target).replace(/\/+$/, '') || '/', host: realOrSelf(m.host) }))
      .sort((a, b) => b.target.length - a.target.length);
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

  toHost(v: string): string | null {
    const m = this.mountOf(v);
    if (!m) return null;
    return path.join(m.host, P.relative(m.target, v));
  }

  /** Host path back to the sandbox's view, for output the model reads. */
  toVirtual(hostPath: string): string | null {
    for (const m of [...this.mounts].sort((a, b) => b.host.length - a.host.length)) {
      const rel = path.relative(m.host, hostPath);
      if (rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel))) return rel === '' ? m.target : P.join(m.target, rel.split(path.sep).join('/'));
    }
    return null;
  }

  /**
   * Resolves `input` (absolute, or relative to /workspace) to a file inside
   * a mount, following symlinks. Throws PathError when it leaves the mounts,
   * or, with `write`, when it lands on a read-only mount.
   */
  resolve(input: string, opts: { write?: boolean } = {}): Resolved {
    if (input.includes('\0')) throw new PathError(`${JSON.stringify(input)}: a path must not contain NUL`);
    const start = P.isAbsolute(input) ? input : P.join(this.home, input);
    let pending = P.normalize(start).split('/').filter(Boolean);
    let cur = '/';
    let links = 0;
    while (pending.length) {
      const comp = pending.shift() as string;
      if (comp === '.') continue;
      if (comp === '..') {
        cur = P.dirname(cur);
        continue;
      }
      const next = P.join(cur, comp);
      const m = this.mountOf(next);
      if (!m) {
        if (this.isAncestorOfMount(next)) {
          cur = next;
          continue;
        }
        throw new PathError(`${input}: outside the workspace (${next} is not under ${this.describeRoots(opts.write)})`);
      }
      const host = this.toHost(next) as string;
      let st: fs.Stats;
      try {
        st = fs.lstatSync(host);
      } catch {
        // Does not exist (yet): nothing below it can be a link.
        cur = P.join(next, ...pending);
        pending = [];
        break;
      }
      if (st.isSymbolicLink()) {
        if (++links > MAX_LINKS) throw new PathError(`${input}: too many levels of symbolic links`);
        const target = fs.readlinkSync(host);
        // Absolute targets are sandbox paths; relative ones are relative to the link's directory.
        const joined = P.isAbsolute(target) ? target : P.join(cur, target);
        pending = [...P.normalize(joined).split('/').filter(Boolean), ...pending];
        cur = '/';
        continue;
      }
      cur = next;
    }
    const mount = this.mountOf(cur);
    if (!mount) throw new PathError(`${input}: outside the workspace (resolves to ${cur}, which is not under ${this.describeRoots(opts.write)})`);
    if (opts.write && !mount.writable) throw new PathError(`${input}: ${mount.target} is read-only`);
    return { virtual: cur, host: this.toHost(cur) as string, mount };
  }

  private describeRoots(write?: boolean): string {
    const roots = this.mounts.filter((m) => !write || m.writable).map((m) => m.target);
    return roots.join(', ');
  }
}

function realOrSelf(p: string): string {
  try {
    return fs.realpathSync(p);
  } catch {
    return path.resolve(p);
  }
}
