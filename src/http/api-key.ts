/**
 * The key every request to the HTTP API carries (`x-api-key`, or
 * `Authorization: Bearer`, which is what @anthropic-ai/sdk 1.12.0 sends).
 *
 * Where it comes from: OPENBOA_API_KEY in the server's environment, else
 * `<home>/.openboa/api-key`, made on first start (32 random bytes, mode
 * 0600, created with O_EXCL so two servers starting at once agree on one
 * key) and reported once as `created` so the command can print it.
 * Comparison is in constant time over SHA-256 digests (equal lengths
 * whatever the candidate's).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Home } from '../core/foundation/home.js';

export interface ApiKey {
  /** The key. */
  value: string;
  /** Where it came from: the environment, the home's file, or the file just made. */
  source: 'env' | 'file' | 'created';
  /** The file (for source file/created). */
  file: string | null;
}

export const apiKeyFile = (home: Home) => path.join(home.root, '.openboa', 'api-key');

/** A key given in OPENBOA_API_KEY (non-empty, trimmed), else null. */
export function configuredKey(env: NodeJS.ProcessEnv): string | null {
  const v = env.OPENBOA_API_KEY?.trim();
  return v ? v : null;
}

/** The key the server accepts: the environment's, the home's file, or a new file made now. */
export function loadOrCreateApiKey(home: Home, env: NodeJS.ProcessEnv): ApiKey {
  const fromEnv = configuredKey(env);
  if (fromEnv) return { value: fromEnv, source: 'env', file: null };
  const file = apiKeyFile(home);
  const existing = readKeyFile(file);
  if (existing) return { value: existing, source: 'file', file };
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const value = `obk_${crypto.randomBytes(32).toString('base64url')}`;
  try {
    // O_EXCL: of two servers starting at once, one writes; the other reads what it wrote.
    const fd = fs.openSync(file, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW, 0o600);
    try {
      fs.writeSync(fd, `${value}\n`);
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    return { value, source: 'created', file };
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    const raced = readKeyFile(file);
    if (!raced) throw new Error(`${file} exists but holds no key: remove it or set OPENBOA_API_KEY`);
    return { value: raced, source: 'file', file };
  }
}

/** The key in `file` (first line, trimmed), null when there is no file; a symlink or an empty file is refused. */
function readKeyFile(file: string): string | null {
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new Error(`cannot read the API key in ${file}: ${(e as Error).message}`);
  }
  try {
    const text = fs.readFileSync(fd, 'utf8').split('\n')[0]?.trim() ?? '';
    return text === '' ? null : text;
  } finally {
    fs.closeSync(fd);
  }
}

/** Whether `candidate` is `key`, in time that does not depend on where they differ. */
export function sameKey(candidate: string, key: string): boolean {
  const a = crypto.createHash('sha256').update(candidate).digest();
  const b = crypto.createHash('sha256').update(key).digest();
  return crypto.timingSafeEqual(a, b);
}
