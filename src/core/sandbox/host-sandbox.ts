/**
 * The host sandbox: the Sandbox port (./sandbox.ts) as the daemon provides
 * it on its own machine, for one run.
 *
 * - execFresh: one command in a sandbox of its own (./one-shot.ts), its
 *   exit status from the kernel.
 * - exec, restart, close: the session's ShellSession (./shell-session.ts),
 *   one persistent bash in a pty (./pty-shell.ts) under the run's isolation
 *   (bubblewrap, unshare-net or unconfined: ./isolation.ts). The shell
 *   starts on the first command and is killed by close().
 * - read, write, modify, list: VirtualFs (./virtual-fs.ts). Each operation
 *   is one walk beneath the mounts that ends in an open descriptor, and the
 *   operation then reads or writes that descriptor, never the path again:
 *   nothing the agent's shell renames meanwhile can lead it outside a mount.
 *   modify reads and writes the same descriptor.
 * - glob, grep: ./host-search.ts, the same walk, matching in worker threads.
 * - hideHostPaths: ./host-paths.ts, under bubblewrap only (unconfined, the
 *   shell's host paths are its real ones).
 *
 * What VirtualFs throws (PathError, FileError) becomes a failure here:
 * `refused` for a path the sandbox does not allow, the errno name for what
 * the file system said; both messages name sandbox paths only.
 */
import fs from 'node:fs';
import nodePath from 'node:path';
import { at, fileError, FileError, PathError, readAtMost } from './beneath.js';
import { replaceBeneath, TOO_LARGE } from './atomic-replace.js';
import { globBeneath, grepBeneath } from './host-search.js';
import { ShellSession } from './shell-session.js';
import { VirtualFs } from './virtual-fs.js';
import {
  failure,
  type Change,
  type ExecOptions,
  type ExecResult,
  type FileContent,
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
  type SandboxSpec,
} from './sandbox.js';

/** The spec a run gives its sandbox (the port's SandboxSpec), by the name this module has always given it. */
export type HostSandboxOptions = SandboxSpec;

/** The sandbox of this machine: the shell in a pty under the run's isolation, the files walked beneath the mounts. */
export const hostSandbox = (o: SandboxSpec): Sandbox => new HostSandbox(o);

const notRegular = (virtual: string) => failure('not_regular', `${virtual} is not a regular file`);

/** Dangling symlinks landsIn follows, as the kernel would (ELOOP past that). */
const MAX_LINKS = 40;

class HostSandbox implements Sandbox {
  private readonly shell: ShellSession;
  private readonly vfs: VirtualFs;

  constructor(private readonly o: HostSandboxOptions) {
    this.shell = new ShellSession(o);
    this.vfs = new VirtualFs(
      o.mounts.map((m) => ({ target: m.target, host: m.host, writable: m.writable, atomic: m.atomic, maxFileBytes: m.maxFileBytes })),
      { hideHostPaths: o.isolation === 'bwrap' },
    );
  }

  async exec(command: string, o: ExecOptions): Promise<ExecResult | SandboxFailure> {
    try {
      const r = await this.shell.run(command, { timeoutMs: o.timeoutMs, signal: o.signal });
      return { output: r.output, exitCode: r.exitCode, timedOut: r.timedOut, interrupted: r.interrupted, shellDied: r.shellDied, cwd: r.cwd };
    } catch (e) {
      // No sandbox here, or the shell did not start.
      return failure('no_shell', (e as Error).message);
    }
  }

  async execFresh(command: string, o: ExecOptions): Promise<ExecResult | SandboxFailure> {
    try {
      const r = await this.shell.once(command, { timeoutMs: o.timeoutMs, signal: o.signal });
      // Secrets out before anything else sees the output, as the shell's own output is.
      return { output: this.o.redactor.text(r.output), exitCode: r.exitCode, timedOut: r.timedOut, interrupted: r.interrupted, shellDied: false, cwd: this.vfs.home };
    } catch (e) {
      return failure('no_shell', (e as Error).message);
    }
  }

  async restart(_o: OpOptions): Promise<SandboxFailure | null> {
    try {
      await this.shell.restart();
      return null;
    } catch (e) {
      return failure('no_shell', (e as Error).message);
    }
  }

  async read(path: string, o: ReadOptions): Promise<FileContent | SandboxFailure> {
    return this.guard(path, () => {
      const h = this.vfs.open(path);
      try {
        if (h.stat.isDirectory()) return failure('EISDIR', `${h.virtual}: is a directory`);
        if (!h.stat.isFile()) return notRegular(h.virtual);
        return { virtual: h.virtual, data: h.stat.size > o.maxBytes ? null : readAtMost(h.fd, o.maxBytes, h.stat.size) };
      } finally {
        h.close();
      }
    });
  }

  async write(path: string, content: string, _o: OpOptions): Promise<Written | SandboxFailure> {
    return this.guard(path, () => {
      const data = Buffer.from(content, 'utf8');
      // A mount that replaces files whole (/memory): decided on where the path leads (a symlink into it, too).
      const lands = this.landsIn(path);
      if (lands?.atomic) return replaceBeneath(this.vfs, lands.virtual, data);
      // Written beneath the mounts: a symlink the agent planted on the way (.openboa -> /etc) cannot redirect it.
      const h = this.vfs.open(path, { write: true, parents: true });
      try {
        if (!h.stat.isFile()) return notRegular(h.virtual);
        // A link that appeared since landsIn looked: the content still goes in whole. (Too large, it leaves the
        // empty file the open created, as the agent's shell could create one itself.)
        if (h.mount.atomic) return replaceBeneath(this.vfs, h.virtual, data);
        return { virtual: h.virtual, bytes: replaceContent(h.fd, data) };
      } finally {
        h.close();
      }
    });
  }

  async modify(path: string, change: Change, o: ReadOptions): Promise<Modified | SandboxFailure> {
    return this.guard(path, () => {
      // One descriptor for the read and the write: the file changed is the file read.
      const h = this.vfs.open(path, { modify: true });
      try {
        if (!h.stat.isFile()) return notRegular(h.virtual);
        const next = change(h.stat.size > o.maxBytes ? null : readAtMost(h.fd, o.maxBytes, h.stat.size), h.virtual);
        if (next === null) return { virtual: h.virtual, written: false };
        // Where files are replaced whole, the new content replaces the name the read ended on (last writer wins).
        if (h.mount.atomic) replaceBeneath(this.vfs, h.virtual, Buffer.from(next, 'utf8'));
        else replaceContent(h.fd, Buffer.from(next, 'utf8'));
        return { virtual: h.virtual, written: true };
      } finally {
        h.close();
      }
    });
  }

  /**
   * Where a write of `path` lands and whether its mount replaces files
   * whole: an existing file's place (symlinks followed); for a missing one,
   * the dangling symlinks on its name followed too, since creating it would
   * follow them (/workspace/m -> /memory/MEMORY.md lands in /memory); the
   * path itself when nothing is there. Decided before anything is opened
   * for writing, so a write a mount refuses (too large) creates nothing.
   */
  private landsIn(path: string): { virtual: string; atomic: boolean } | null {
    let p = this.vfs.absolute(path);
    for (let links = 0; links <= MAX_LINKS; links++) {
      try {
        const h = this.vfs.open(p);
        h.close();
        return { virtual: h.virtual, atomic: h.mount.atomic === true };
      } catch {
        // nothing there (or nothing openable): look at the name itself
      }
      let next: string | null = null;
      try {
        const d = this.vfs.open(nodePath.posix.dirname(p), { directory: true });
        try {
          p = nodePath.posix.join(d.virtual, nodePath.posix.basename(p));
          next = nodePath.posix.resolve(d.virtual, fs.readlinkSync(at(d.fd, nodePath.posix.basename(p))));
        } finally {
          d.close();
        }
      } catch {
        // no parent yet, or not a symlink: the write creates the name itself
      }
      if (next === null) break;
      p = next;
    }
    const m = this.vfs.mountOf(p);
    return m ? { virtual: p, atomic: m.atomic === true } : null;
  }

  async list(path: string, o: ListOptions): Promise<Listing | SandboxFailure> {
    return this.guard(path, () => {
      const h = this.vfs.open(path);
      try {
        if (!h.stat.isDirectory()) return failure('ENOTDIR', `${h.virtual}: not a directory`);
        return { virtual: h.virtual, ...this.vfs.list(h, o.max) };
      } finally {
        h.close();
      }
    });
  }

  async glob(pattern: string, o: SearchOptions): Promise<GlobResult | SandboxFailure> {
    return this.guard(o.path ?? this.vfs.home, () => globBeneath(this.vfs, this.o.clock, pattern, o));
  }

  async grep(pattern: string, o: GrepOptions): Promise<GrepResult | SandboxFailure> {
    return this.guard(o.path ?? this.vfs.home, () => grepBeneath(this.vfs, this.o.clock, pattern, o));
  }

  hideHostPaths(text: string): string {
    return this.vfs.hideHostPaths(text);
  }

  close(): void {
    this.shell.close();
  }

  /** Runs a file operation; what the walk or the file system throws becomes a failure naming sandbox paths only. */
  private async guard<T>(input: string, fn: () => T | SandboxFailure | Promise<T | SandboxFailure>): Promise<T | SandboxFailure> {
    try {
      return await fn();
    } catch (e) {
      const f = fileError(e, this.vfs.absolute(input));
      if (f instanceof PathError) return failure('refused', f.message);
      if (f instanceof FileError && f.code === TOO_LARGE) return failure('too_large', f.message);
      return failure(f instanceof FileError && f.code.startsWith('E') ? (f.code as `E${string}`) : 'failed', f.message);
    }
  }
}

/** Replaces the content of an open regular file with `data`; returns the bytes written. */
function replaceContent(fd: number, data: Buffer): number {
  fs.ftruncateSync(fd, 0);
  for (let off = 0; off < data.length; ) off += fs.writeSync(fd, data, off, data.length - off, off);
  return data.length;
}
