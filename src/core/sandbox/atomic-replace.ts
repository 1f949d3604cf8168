/**
 * Replacing a file whole beneath a mount (MountSpec.atomic: /memory and
 * /substrate, docs/memory.md): the content goes to a temp file in the
 * target's own directory, which is then renamed over the target. A reader —
 * another session of the same agent, its shell, the daemon's memory scan —
 * sees the old file or the new one, never a torn one, and two writers at
 * once leave one whole file (the last rename wins).
 *
 * Race-free like every file operation of the host sandbox: the directory is
 * opened by the walk beneath the mounts (./virtual-fs.ts), and the temp file
 * and the rename are single names looked up in that open descriptor
 * (./beneath.ts), so no symlink or rename the agent makes meanwhile leads
 * the write outside the mount. The temp file is created O_EXCL|O_NOFOLLOW.
 * The rename replaces the name given: a symlink there is replaced, not
 * written through.
 *
 * Temp files are named `.<name>.<12 hex>.openboa-tmp` (TEMP_NAME). The
 * create, write and rename happen in one synchronous call, so the memory
 * scan (asynchronous, in this process) never meets one in progress and
 * versions such names like any other. A crash between create and rename
 * leaves one behind; it holds nothing the log depends on, and the memory
 * scan removes it once it is stale (memory-dir.ts, removeStaleTemps).
 */
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { at, closeQuietly, FileError, fileError, PathError } from './beneath.js';
import type { VirtualFs } from './virtual-fs.js';

const P = path.posix;
const C = fs.constants;
const TEMP_FLAGS = C.O_WRONLY | C.O_CREAT | C.O_EXCL | C.O_NOFOLLOW | C.O_NOCTTY;

/** The names replaceBeneath's temp files have. */
export const TEMP_NAME = /^\..*\.[0-9a-f]{12}\.openboa-tmp$/;

/** The FileError code of a write over a mount's maxFileBytes. */
export const TOO_LARGE = 'too_large';

/**
 * Writes `data` as the whole content of `input` (a sandbox path), creating
 * missing parent directories. Throws PathError (outside the mounts,
 * read-only) or FileError (what the file system said; code `too_large`
 * when the data is over the mount's maxFileBytes).
 */
export function replaceBeneath(vfs: VirtualFs, input: string, data: Buffer, o: { durable?: boolean } = {}): { virtual: string; bytes: number } {
  const abs = vfs.absolute(input);
  const name = P.basename(abs);
  if (abs === '/' || name === '' || name === '.' || name === '..') throw new PathError(`${input}: not a file name`);
  checkSize(abs, vfs.mountOf(abs)?.maxFileBytes, data.length);
  const dir = vfs.open(P.dirname(abs), { write: true, parents: true, directory: true });
  try {
    const target = P.join(dir.virtual, name);
    checkSize(target, dir.mount.maxFileBytes, data.length);
    // The temp name's length is bounded (NAME_MAX is 255): the target's name is cut to fit.
    const tmp = `.${name.slice(0, 200)}.${randomBytes(6).toString('hex')}.openboa-tmp`;
    let fd: number;
    try {
      fd = fs.openSync(at(dir.fd, tmp), TEMP_FLAGS, 0o644);
    } catch (e) {
      throw fileError(e, target);
    }
    try {
      for (let off = 0; off < data.length; ) off += fs.writeSync(fd, data, off, data.length - off);
      if (o.durable) fs.fsyncSync(fd);
    } catch (e) {
      closeQuietly(fd);
      fs.rmSync(at(dir.fd, tmp), { force: true });
      throw fileError(e, target);
    }
    closeQuietly(fd);
    try {
      fs.renameSync(at(dir.fd, tmp), at(dir.fd, name));
    } catch (e) {
      fs.rmSync(at(dir.fd, tmp), { force: true });
      throw fileError(e, target);
    }
    return { virtual: target, bytes: data.length };
  } finally {
    dir.close();
  }
}

function checkSize(virtual: string, max: number | undefined, bytes: number): void {
  if (max !== undefined && bytes > max) {
    throw new FileError(TOO_LARGE, `${virtual}: ${bytes} bytes is more than a document here may hold (${max} bytes); nothing was written. Split it into smaller documents or shorten it.`);
  }
}
