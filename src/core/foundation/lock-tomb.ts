/**
 * The end of a broken lock (lease.ts breakAbandoned, lease-observation.ts
 * observedStale): the lock directory, already renamed to a tombstone and
 * checked to be the very lock judged broken, is removed with one rmdir,
 * never recursively.
 *
 * A lock proper-lockfile made is an empty directory: it only ever mkdirs and
 * rmdirs it. A tombstone with anything in it, or one that is not a directory
 * (a symlink, a file), was made or filled by someone else who can write the
 * folder it stands in, and who can still change it while it is removed. A
 * removal that walks it by path (fs.rmSync recursive: lstat a child, then
 * readdir it and unlink what is below it by name) goes where a child swapped
 * for a symlink in between points, and deletes files there. So such a
 * tombstone is left where it is, under its tombstone name, and reported as a
 * process warning with code LOCK_LEFTOVER; the lock is taken away either
 * way (it no longer stands at the lock's name).
 */
import fs from 'node:fs';

/** The code of the process warning that reports a tombstone left in place. */
export const LOCK_LEFTOVER = 'OPENBOA_LOCK_LEFTOVER';

const WHY: Record<string, string> = {
  ENOTEMPTY: 'it holds entries, which no lock does',
  EEXIST: 'it holds entries, which no lock does',
  ENOTDIR: 'it is not a directory',
};

/** Removes the tombstone `tomb` if it is an empty directory; else leaves it and reports it. Never throws. */
export function removeTomb(tomb: string): void {
  try {
    fs.rmdirSync(tomb);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? 'EIO';
    if (code === 'ENOENT') return;
    process.emitWarning(`a broken lock was left at ${tomb}, not removed: ${WHY[code] ?? `rmdir failed (${code})`}`, { code: LOCK_LEFTOVER });
  }
}
