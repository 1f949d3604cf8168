/**
 * The primitives VirtualFs walks with: openat(), readlinkat() and mkdirat()
 * relative to an open directory descriptor, which Node does not expose.
 * They go through /proc/self/fd/<fd>/<name>: the kernel resolves
 * /proc/self/fd/<fd> to the very directory the descriptor holds (wherever
 * it has been renamed to since), then looks up the single `name` in it. With
 * O_NOFOLLOW a symlink in that last place fails with ELOOP instead of being
 * followed. So each step is one lookup of one name in a directory we hold,
 * which no rename elsewhere can redirect; this is the per-component walk
 * that openat2(RESOLVE_BENEATH) does in the kernel, done from user space.
 * And what is done with a descriptor once opened: readAtMost() reads one
 * with a bound on what is read, not on what fstat said.
 *
 * Errors say what happened in sandbox paths only: the host path of a
 * session is never part of a message the model or a person reads.
 */
import fs from 'node:fs';

const C = fs.constants;

/** An intermediate step: a directory, never a symlink, never a controlling tty. */
export const DIR_FLAGS = C.O_RDONLY | C.O_DIRECTORY | C.O_NOFOLLOW | C.O_NOCTTY;
/**
 * The last step, for reading. O_NONBLOCK: a FIFO or a device opened for
 * reading would otherwise block the daemon's only thread; the tools refuse
 * anything that is not a regular file or a directory after fstat.
 */
export const READ_FLAGS = C.O_RDONLY | C.O_NOFOLLOW | C.O_NONBLOCK | C.O_NOCTTY;
/** The last step, for writing: created when missing (0644), never through a symlink. */
export const WRITE_FLAGS = C.O_RDWR | C.O_CREAT | C.O_NOFOLLOW | C.O_NONBLOCK | C.O_NOCTTY;
/** The last step, for changing an existing file (edit). */
export const EDIT_FLAGS = C.O_RDWR | C.O_NOFOLLOW | C.O_NONBLOCK | C.O_NOCTTY;

/** The path that names an open descriptor itself. */
export const fdPath = (fd: number): string => `/proc/self/fd/${fd}`;

/** The path that names `name` inside the directory open as `dirFd` (one component: no "/", not "." or ".."). */
export function at(dirFd: number, name: string): string {
  if (name === '' || name === '.' || name === '..' || name.includes('/')) throw new Error(`at(): "${name}" is not a single path component`);
  return `${fdPath(dirFd)}/${name}`;
}

export function closeQuietly(fd: number | null): void {
  if (fd === null) return;
  try {
    fs.closeSync(fd);
  } catch {
    // already closed
  }
}

/** A path the file tools refuse: outside the mounts, a write to a read-only mount, a symlink loop. */
export class PathError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PathError';
  }
}

/** What the file system said about a sandbox path (ENOENT, EACCES, ...), without the host path. */
export class FileError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'FileError';
  }
}

const WORDS: Record<string, string> = {
  ENOENT: 'no such file or directory',
  ENOTDIR: 'a parent is not a directory',
  EISDIR: 'is a directory',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EEXIST: 'already exists',
  ENOSPC: 'no space left on the device',
  EDQUOT: 'disk quota exceeded',
  EROFS: 'read-only file system',
  ENAMETOOLONG: 'name too long',
  EMFILE: 'too many open files',
  ENFILE: 'too many open files',
  ENXIO: 'not a regular file',
  ELOOP: 'too many levels of symbolic links',
  EBUSY: 'busy',
  ETXTBSY: 'text file busy',
  EFBIG: 'file too large',
};

/** Turns a Node fs error into a FileError that names `virtual`, never the host path in `e.message`. */
export function fileError(e: unknown, virtual: string): FileError | PathError {
  if (e instanceof PathError || e instanceof FileError) return e;
  const code = (e as NodeJS.ErrnoException)?.code ?? 'EIO';
  return new FileError(code, `${virtual}: ${WORDS[code] ?? `failed (${code})`}`);
}

/** Opens a mount's root directory (a host path the runtime configured, not the agent). */
export function openMountRoot(host: string, virtual: string): number {
  try {
    return fs.openSync(host, DIR_FLAGS);
  } catch (e) {
    throw fileError(e, virtual);
  }
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
