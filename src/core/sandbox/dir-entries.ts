/**
 * Directory entries as VirtualFs's walk reads them: listings read one entry
 * at a time up to a bound, names as bytes and as text (walkName), one name
 * beneath an open directory descriptor (rawAt), and what an entry is
 * without following it (kindOf, kindAt). None of these follows a symlink.
 */
import fs from 'node:fs';
import { at, fdPath } from './beneath.js';

/** Entries of a directory, read one at a time, at most `max` (readdirSync would load them all first). */
export function readEntries(dir: string, max: number): fs.Dirent[] {
  const out: fs.Dirent[] = [];
  const d = fs.opendirSync(dir, { bufferSize: 256 });
  try {
    for (let e = d.readSync(); e && out.length < max; e = d.readSync()) out.push(e);
  } finally {
    d.closeSync();
  }
  return out;
}

/** Like readEntries, names as bytes (a name need not be UTF-8). */
export function readRawEntries(dir: string, max: number): Array<fs.Dirent<Buffer>> {
  const out: Array<fs.Dirent<Buffer>> = [];
  const d = fs.opendirSync(dir, { bufferSize: 256, encoding: 'buffer' as BufferEncoding });
  try {
    for (let e = d.readSync() as fs.Dirent<Buffer> | null; e && out.length < max; e = d.readSync() as fs.Dirent<Buffer> | null) out.push(e);
  } finally {
    d.closeSync();
  }
  return out;
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * A directory entry's name as text: itself when it is valid UTF-8; else
 * every byte from 0x80 up written `\xHH` (ASCII kept), so the name stays
 * one readable, distinct-per-byte-string path component.
 */
export function walkName(name: Buffer): string {
  try {
    return UTF8.decode(name);
  } catch {
    let out = '';
    for (const b of name) out += b < 0x80 ? String.fromCharCode(b) : `\\x${b.toString(16).padStart(2, '0')}`;
    return out;
  }
}

/** `name` (bytes, one component) in the directory `dirFd`, as a path the fs calls take. */
export function rawAt(dirFd: number, name: Buffer): Buffer {
  if (name.length === 0 || name.includes(0x2f) || name.equals(Buffer.from('.')) || name.equals(Buffer.from('..'))) throw new Error('rawAt(): not a single path component');
  return Buffer.concat([Buffer.from(`${fdPath(dirFd)}/`), name]);
}

/** The kind of a listed entry or of an lstat; null when the listing did not say (DT_UNKNOWN). */
export function kindOf(e: fs.Dirent<Buffer> | fs.Stats): 'file' | 'directory' | 'symlink' | 'other' | null {
  if (e.isFile()) return 'file';
  if (e.isDirectory()) return 'directory';
  if (e.isSymbolicLink()) return 'symlink';
  if (e.isFIFO() || e.isSocket() || e.isBlockDevice() || e.isCharacterDevice()) return 'other';
  return null;
}

/** What `name` in the directory `dirFd` is now (never followed), or null when it is gone. */
export function kindAt(dirFd: number, name: string): 'symlink' | 'directory' | 'other' | null {
  try {
    const st = fs.lstatSync(at(dirFd, name));
    return st.isSymbolicLink() ? 'symlink' : st.isDirectory() ? 'directory' : 'other';
  } catch {
    return null;
  }
}
