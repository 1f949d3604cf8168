/**
 * Run-scoped API tokens: what a run's sandbox gets as OPENBOA_RUN_TOKEN so
 * the agent can call the home's HTTP API as itself (docs/http.md, "Run
 * tokens").
 *
 * A token is `obrt.<payload>.<mac>`: the payload (base64url JSON) names the
 * agent, the session and the run; the mac is HMAC-SHA256 of the payload
 * under the home's token key (`<home>/.openboa/run-token-key`, 32 random
 * bytes, mode 0600, made once with O_EXCL). The mac proves the runtime
 * minted it; it proves nothing about time. Whether it is still good is
 * asked of the session's lease at each request (the server's auth): only
 * while that run holds the lease.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import * as z from 'zod';
import type { Home } from '../foundation/home.js';

const PREFIX = 'obrt';

const Claims = z.strictObject({ a: z.string().min(1), s: z.string().min(1), r: z.string().min(1) });

export interface RunClaims {
  agentId: string;
  sessionId: string;
  runId: string;
}

const keyFile = (home: Home) => path.join(home.root, '.openboa', 'run-token-key');

/** The home's token key, made on first use. */
export function runTokenKey(home: Home): Buffer {
  const file = keyFile(home);
  const read = () => {
    const fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
    try {
      return fs.readFileSync(fd);
    } finally {
      fs.closeSync(fd);
    }
  };
  try {
    const k = read();
    if (k.length >= 32) return k;
    throw new Error(`${file} is shorter than 32 bytes: remove it (every run token minted under it stops working)`);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  try {
    const fd = fs.openSync(file, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW, 0o600);
    try {
      fs.writeSync(fd, crypto.randomBytes(32));
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
  }
  return read();
}

const mac = (key: Buffer, payload: string) => crypto.createHmac('sha256', key).update(`${PREFIX}.${payload}`).digest('base64url');

/** A token for this run of this agent on this session. */
export function mintRunToken(home: Home, c: RunClaims): string {
  const payload = Buffer.from(JSON.stringify({ a: c.agentId, s: c.sessionId, r: c.runId })).toString('base64url');
  return `${PREFIX}.${payload}.${mac(runTokenKey(home), payload)}`;
}

/** Whether `token` looks like a run token (and not an API key). */
export const isRunToken = (token: string) => token.startsWith(`${PREFIX}.`);

/** The claims of a token the home's key minted; null for anything else (a forged, altered or malformed token). */
export function verifyRunToken(home: Home, token: string): RunClaims | null {
  const parts = token.split('.');
  if (parts.length !== 3 || parts[0] !== PREFIX) return null;
  const [, payload, got] = parts as [string, string, string];
  const want = Buffer.from(mac(runTokenKey(home), payload));
  const given = Buffer.from(got);
  if (given.length !== want.length || !crypto.timingSafeEqual(given, want)) return null;
  try {
    const c = Claims.parse(JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')));
    return { agentId: c.a, sessionId: c.s, runId: c.r };
  } catch {
    return null;
  }
}
