/**
 * Runs the built CLI (dist/cli/main.js, built by `npm test`'s pretest) as a
 * child process, the way a person would.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { REPO } from './home.js';

export const CLI = path.join(REPO, 'dist', 'cli', 'main.js');

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function cli(args: string[], opts: { home?: string; input?: string; env?: NodeJS.ProcessEnv; cwd?: string } = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const env = { ...process.env, ...opts.env };
    delete env.OPENBOA_HOME;
    if (opts.env?.OPENBOA_HOME) env.OPENBOA_HOME = opts.env.OPENBOA_HOME;
    const child = spawn(process.execPath, [CLI, ...(opts.home ? ['--home', opts.home] : []), ...args], {
      env,
      cwd: opts.cwd ?? opts.home ?? REPO,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(opts.input ?? '');
  });
}
