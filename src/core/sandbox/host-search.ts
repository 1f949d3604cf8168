/**
 * glob and grep of the host sandbox: one walk of descriptors beneath the
 * mounts (VirtualFs.walk: every directory entered by name from its parent's
 * descriptor with O_NOFOLLOW, every file opened the same way before it is
 * read), and the matching done in worker threads with a deadline
 * (./grep-worker.ts), so neither a huge tree nor a pattern that backtracks
 * stalls the daemon. File contents are read here, from the descriptors the
 * walk opened; the workers only match text.
 *
 * The callers (HostSandbox) turn thrown PathError / FileError into
 * failures; what these functions return as failures is what the walk or the
 * matching said.
 */
import fs from 'node:fs';
import type { Clock } from '../foundation/clock.js';
import { readAtMost } from './beneath.js';
import { GrepSearch, matchPathsOffThread } from './grep-worker.js';
import { failure, type GlobMatch, type GlobResult, type GrepOptions, type GrepResult, type SandboxFailure, type SearchOptions } from './sandbox.js';
import { compileGlob, isBinary, refuseGrepPattern } from './search-patterns.js';
import type { VirtualFs } from './virtual-fs.js';

/** What a worker's early end becomes. */
function ended(r: { error: string; timedOut?: true; interrupted?: true }): SandboxFailure {
  return failure(r.timedOut ? 'timed_out' : r.interrupted ? 'interrupted' : 'failed', r.error);
}

export async function globBeneath(vfs: VirtualFs, clock: Pick<Clock, 'setTimer'>, pattern: string, o: SearchOptions): Promise<GlobResult | SandboxFailure> {
  const root = vfs.open(o.path ?? vfs.home);
  try {
    if (!root.stat.isDirectory()) return failure('not_directory', `${root.virtual} is not a directory`);
    const re = compileGlob(pattern);
    if (typeof re === 'string') return failure('invalid_pattern', re);
    const files: Array<GlobMatch & { rel: string }> = [];
    const walked = await vfs.walk(
      root,
      (e) => {
        files.push({ rel: e.rel, virtual: e.virtual, mtimeMs: e.stat.mtimeMs });
        return true;
      },
      { signal: o.signal, maxEntries: o.maxEntries },
    );
    const m = await matchPathsOffThread(
      re,
      files.map((f) => f.rel),
      { timeoutMs: o.timeoutMs, signal: o.signal, clock },
    );
    if ('error' in m) return ended(m);
    const matched = m.matched.map((i) => files[i] as (typeof files)[number]);
    return { files: matched.map((f) => ({ virtual: f.virtual, mtimeMs: f.mtimeMs })), truncated: walked.truncated };
  } finally {
    root.close();
  }
}

export async function grepBeneath(vfs: VirtualFs, clock: Pick<Clock, 'setTimer'>, pattern: string, o: GrepOptions): Promise<GrepResult | SandboxFailure> {
  // Refused before anything compiles it: see ./search-patterns.ts.
  const refused = refuseGrepPattern(pattern);
  if (refused) return failure('invalid_pattern', refused);
  const root = vfs.open(o.path ?? vfs.home);
  const search = new GrepSearch(pattern, { maxMatches: o.maxMatches, timeoutMs: o.timeoutMs, signal: o.signal, clock });
  let total = 0;
  let stoppedAtBytes = false;
  let truncated = false;
  // Contents are read here, from descriptors the walk opened; the worker only matches.
  const feed = (virtual: string, fd: number): boolean => {
    const st = fs.fstatSync(fd);
    if (!st.isFile() || st.size > o.maxFileBytes) return true;
    if (total + st.size > o.maxTotalBytes) {
      stoppedAtBytes = true;
      return false;
    }
    const buf = readAtMost(fd, o.maxFileBytes, st.size);
    if (!buf) return true; // grew past the limit since it was looked at: skipped like any large file
    total += buf.length;
    if (!isBinary(buf)) search.add(virtual, buf.toString('utf8'));
    return !search.finished;
  };
  try {
    if (root.stat.isDirectory()) {
      ({ truncated } = await vfs.walk(
        root,
        (e) => {
          if (e.stat.size > o.maxFileBytes) return true;
          let fd: number;
          try {
            fd = e.open();
          } catch {
            return true; // vanished, or swapped for a symlink: skipped
          }
          try {
            return feed(e.virtual, fd);
          } finally {
            fs.closeSync(fd);
          }
        },
        { signal: o.signal, maxEntries: o.maxEntries },
      ));
    } else if (root.stat.isFile()) {
      feed(root.virtual, root.fd);
    } else {
      void search.finish();
      return failure('not_directory', `${root.virtual} is not a regular file or a directory`);
    }
  } catch (e) {
    void search.finish();
    throw e;
  } finally {
    root.close();
  }
  const r = await search.finish();
  if ('error' in r) return ended(r);
  return { lines: r.lines, total: r.total, stoppedAtBytes, truncated };
}
