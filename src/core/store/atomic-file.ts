/**
 * State files are replaced, never edited: write a temp file beside the
 * target, fsync it, rename it over the target, fsync the directory. A crash
 * at any instant leaves either the old file or the new one, never a torn one.
 */
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';

export interface AtomicOptions {
  /** fsync the directory after the rename (default true). */
  fsyncDir?: boolean;
  /**
   * fsync the data before the rename (default true). Caches (runtime/) pass
   * false: after a power loss they may be empty, and are rebuilt.
   */
  durable?: boolean;
}

export function writeFileAtomic(file: string, data: string | Uint8Array, opts: AtomicOptions = {}): void {
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${randomBytes(6).toString('hex')}.tmp`);
  const fd = fs.openSync(tmp, 'w', 0o644);
  try {
    fs.writeFileSync(fd, data);
    if (opts.durable !== false) fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  try {
    fs.renameSync(tmp, file);
  } catch (e) {
    fs.rmSync(tmp, { force: true });
    throw e;
  }
  if (opts.fsyncDir !== false && opts.durable !== false) fsyncDir(path.dirname(file));
}

export function writeJsonAtomic(file: string, value: unknown, opts?: AtomicOptions): void {
  writeFileAtomic(file, `${JSON.stringify(value, null, 2)}\n`, opts);
}

export function fsyncDir(dir: string): void {
  let fd: number | undefined;
  try {
    fd = fs.openSync(dir, 'r');
    fs.fsyncSync(fd);
  } catch {
    // Some filesystems refuse fsync on a directory; the rename is still atomic.
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}
