/**
 * Who is asking: every request under /v1 carries the home's API key or a
 * run's token, as `x-api-key` or `Authorization: Bearer` (the SDK sends the
 * latter). The key opens everything; a run token (core/run/run-token.ts)
 * opens only its own session and that session's children, and only while
 * its run holds the session's lease (checked at every request: the lease
 * file and its owner record name the run).
 *
 * Failures are 401 authentication_error, the same message for a wrong key,
 * a forged token and a token whose run has ended, so a caller learns
 * nothing from which it was.
 */
import type { MiddlewareHandler } from 'hono';
import { leaseHeld, readLeaseOwner } from '../core/foundation/lease.js';
import type { Runtime } from '../core/run/run-context.js';
import { isRunToken, verifyRunToken, type RunClaims } from '../core/run/run-token.js';
import { UUID_V7 } from '../core/schema/index.js';
import { ApiError } from './api-error.js';
import { sameKey } from './api-key.js';

export type Principal = { kind: 'key' } | { kind: 'run'; claims: RunClaims };

export type AuthEnv = { Variables: { principal: Principal } };

const refused = () => new ApiError('authentication_error', 'invalid x-api-key or bearer token', false);

/** The credential a request carries: x-api-key first, else a Bearer token; null for none. */
export function credentialOf(headers: Headers): string | null {
  const key = headers.get('x-api-key');
  if (key) return key.trim();
  const auth = headers.get('authorization');
  const m = auth ? /^Bearer\s+(.+)$/i.exec(auth.trim()) : null;
  return m ? (m[1] as string).trim() : null;
}

/** Whether the run a token names holds its session's lease now. */
export async function runIsLive(rt: Runtime, c: RunClaims): Promise<boolean> {
  if (!UUID_V7.test(c.sessionId)) return false;
  const p = rt.store.paths(c.sessionId);
  return readLeaseOwner(p)?.wake_id === c.runId && (await leaseHeld(p));
}

export function requireAuth(rt: Runtime, apiKey: string): MiddlewareHandler<AuthEnv> {
  return async (c, next) => {
    const given = credentialOf(c.req.raw.headers);
    if (!given) throw new ApiError('authentication_error', 'missing credentials: send the API key as x-api-key or Authorization: Bearer', false);
    if (isRunToken(given)) {
      const claims = verifyRunToken(rt.home, given);
      if (!claims || !(await runIsLive(rt, claims))) throw refused();
      c.set('principal', { kind: 'run', claims });
    } else {
      if (!sameKey(given, apiKey)) throw refused();
      c.set('principal', { kind: 'key' });
    }
    await next();
  };
}
