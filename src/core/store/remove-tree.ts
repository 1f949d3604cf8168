/**
 * Removes a directory tree an agent shaped: a deleted session's folder,
 * whose workspace may be nested far deeper than PATH_MAX (a shell makes
 * that with one `cd` at a time). A removal by path, Node's
 * `fs.rmSync(recursive)` among them, fails there with ENAMETOOLONG.
 *
 * Here no path grows with the depth: each directory is opened by name from
 * the top of the tree (O_NOFOLLOW: a symlink is removed, never followed),
 * its entries are named through its descriptor (/proc/self/fd/<fd>/<name>,
 * as the file tools do: beneath.ts), files are unlinked, and subdirectories
 * are moved up to the top of the tree under a fresh name, to be emptied by
 * a later pass. At most two directories are open at once, and names are
 * handled as bytes (a name that is not UTF-8 is removed too).
 *
 * Throws the first error it cannot get past (a directory its owner made
 * unreadable, say); the tree is then partly removed.
 */
import fs from 'node:fs';
import { randomBytes } from 'node:crypto';
import { DIR_FLAGS, fdPath } from '../sandbox/beneath.js';

/** The entry `name` of the directory open as `fd`, as a path whose length does not depend on where that directory is. */
const entry = (fd: number, name: Buffer): Buffer => Buffer.concat([Buffer.from(`${fdPath(fd)}/`), name]);

const list = (fd: number): Buffer[] => fs.readdirSync(fdPath(fd), { encoding: 'buffer' });

export function removeTree(dir: string): void {
  const top = fs.openSync(dir, DIR_FLAGS);
  const prefix = `.removing-${randomBytes(4).toString('hex')}-`;
  let hoisted = 0;
  try {
    for (let names = list(top); names.length > 0; names = list(top)) {
      for (const name of names) {
        const p = entry(top, name);
        if (!fs.lstatSync(p).isDirectory()) {
          fs.unlinkSync(p);
          continue;
        }
        const fd = fs.openSync(p, DIR_FLAGS);
        try {
          for (const child of list(fd)) {
            const c = entry(fd, child);
            if (fs.lstatSync(c).isDirectory()) fs.renameSync(c, entry(top, Buffer.from(`${prefix}${hoisted++}`)));
            else fs.unlinkSync(c);
          }
        } finally {
          fs.closeSync(fd);
        }
        fs.rmdirSync(p);
      }
    }
  } finally {
    fs.closeSync(top);
  }
  fs.rmdirSync(dir);
}
