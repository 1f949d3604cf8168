/**
 * The one way a route reaches a session named in its path: the id checked
 * before it touches a path (a UUIDv7, nothing else: no `..`, no slash), the
 * session's folder a real folder in the home's sessions/ (a symlink there is
 * refused, never followed out of the home), the caller allowed to see it (a
 * run token: its own session or one of its children), and the session's
 * redactor, so nothing the answer carries shows a secret.
 *
 * A session the caller may not see is answered exactly as one that does not
 * exist (404), so a run token learns nothing of other sessions.
 *
 * The folder check and the store's reads are separate path lookups, not one
 * operation: a folder swapped for a symlink in between would be followed.
 * Only a writer of sessions/ (the home's owner, never an agent: its sandbox
 * sees its workspace only) can swap one; docs/http.md, Security, says why a
 * handle-based store is not done.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Redactor } from '../core/foundation/redact.js';
import { sessionRedactor } from '../core/run/environment.js';
import type { Runtime } from '../core/run/run-context.js';
import { UUID_V7, type SessionSnapshot } from '../core/schema/index.js';
import { ApiError, notFound } from './api-error.js';
import type { Principal } from './auth.js';

export interface SessionAccess {
  id: string;
  snapshot: SessionSnapshot;
  redactor: Redactor;
}

/** The session `id` for `who`, or a 404. */
export function openSession(rt: Runtime, who: Principal, id: string): SessionAccess {
  if (!UUID_V7.test(id)) throw notFound(`session ${JSON.stringify(id.slice(0, 80))}`);
  const dir = path.join(rt.home.sessionsDir, id);
  const st = fs.lstatSync(dir, { throwIfNoEntry: false });
  if (!st || !st.isDirectory()) throw notFound(`session ${id}`);
  let snapshot: SessionSnapshot;
  try {
    snapshot = rt.store.snapshot(id);
  } catch {
    throw notFound(`session ${id}`);
  }
  if (!mayAccess(who, snapshot)) throw notFound(`session ${id}`);
  return { id, snapshot, redactor: redactorOf(rt, snapshot) };
}

/** Whether `who` may see this session: the key sees all; a run token its own session and that session's children. */
export function mayAccess(who: Principal, s: Pick<SessionSnapshot, 'id' | 'parent_session_id'>): boolean {
  if (who.kind === 'key') return true;
  return s.id === who.claims.sessionId || s.parent_session_id === who.claims.sessionId;
}

/**
 * Whether `who` may see the children of session `id` (which it may see):
 * the key, any session's; a run token, its own session's only. A child's
 * children are the child's business, not its parent's: a run token sees
 * its own session and its direct children, never deeper (docs/http.md,
 * "Run tokens").
 */
export function seesChildrenOf(who: Principal, id: string): boolean {
  return who.kind === 'key' || id === who.claims.sessionId;
}

const redactors = new Map<string, Redactor>();

/**
 * The session's secrets as this process's environment has them (what the
 * CLI prints through). Kept per environment file version and overrides, so
 * a listing does not parse the environment's YAML once per session; an
 * edited environment file is read again (its mtime and size are the key).
 */
export function redactorOf(rt: Runtime, s: Pick<SessionSnapshot, 'environment_id' | 'overrides'>): Redactor {
  let stamp = 'none';
  try {
    const st = fs.statSync(rt.home.environmentFile(s.environment_id));
    stamp = `${st.mtimeMs}:${st.size}:${st.ino}`;
  } catch {
    // no file: sessionRedactor answers Redactor.none, kept under this key
  }
  const key = `${rt.home.root}|${s.environment_id}|${stamp}|${JSON.stringify(s.overrides.env ?? {})}`;
  let r = redactors.get(key);
  if (!r) {
    r = sessionRedactor(rt.home, s.environment_id, s.overrides, rt.deps.env);
    if (redactors.size >= 256) redactors.delete(redactors.keys().next().value as string);
    redactors.set(key, r);
  }
  return r;
}

/**
 * What only a person (the key) may do to a session, never a run's token, even
 * on its own children: answer what waits for a person (a confirmation, a
 * custom tool's result, an escalation), resume what a person paused, change
 * or delete a session. A run reaches its children by messages and interrupts.
 */
export function personOnly(who: Principal, what: string): void {
  if (who.kind === 'run') throw new ApiError('permission_error', `a run token cannot ${what}: that is for a person (the API key)`, false);
}

/** The event types a run's token may send to a session (its own or a child): messages and interrupts. */
export const RUN_TOKEN_EVENTS: ReadonlySet<string> = new Set(['user.message', 'user.interrupt']);
