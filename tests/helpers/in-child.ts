/**
 * Runs the text of an ES module in a child node (with tsx: it may import
 * the sources by path), for a call that could block the thread it runs on,
 * such as an open of a FIFO: the test's own process never blocks on it, and
 * a child that does is killed after `timeoutMs` and reported as timed out.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { REPO } from './home.js';

export interface ChildResult {
  status: number | null;
  stdout: string;
  stderr: string;
  /** The child was still running after timeoutMs (and was killed). */
  timedOut: boolean;
}

/** The import specifier of a source file, from the repository's root ('src/core/x.ts'). */
export const source = (rel: string): string => JSON.stringify(path.join(REPO, rel));

/** A generous bound: it is there to end a blocked child, not to time a call (a loaded machine starts node slowly). */
export function runInChild(code: string, timeoutMs = 60_000): ChildResult {
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], { cwd: REPO, encoding: 'utf8', timeout: timeoutMs, killSignal: 'SIGKILL' });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, timedOut: r.error !== undefined && (r.error as NodeJS.ErrnoException).code === 'ETIMEDOUT' };
}
