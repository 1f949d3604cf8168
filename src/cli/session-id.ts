/**
 * Ids as a person types them. A session id: the whole UUIDv7, or any part of
 * it that names exactly one session of the home: a prefix (like git's
 * abbreviated hashes), or the last hex digits the daemon prints beside each
 * line of a run (`8d9bbcfb`), or any other run of its digits (dashes do not
 * count). UUIDv7 prefixes are the creation time, so sessions made in the same
 * minute share 12 digits; the random tail tells them apart. An event id that
 * answers a waiting tool use: the whole id, or a part of it that names exactly
 * one of the session's waiting tool uses. The dispatcher resolves every
 * argument named `id` (and the event ids the answer commands take) through
 * here, so every command takes short ids without knowing it.
 */
import { UUID_V7 } from '../core/schema/format-constants.js';
import { notFound } from '../core/foundation/errors.js';
import type { SessionStore } from '../core/store/session-store.js';
import { UsageError } from './command.js';

/** How many candidates an ambiguous id names before "and N more". */
const SHOWN = 8;

/** The short form of a session id people see beside a run's lines: its last 8 hex digits (random in a UUIDv7). */
export const shortSessionId = (id: string) => id.slice(-8);

const hexOf = (s: string) => s.toLowerCase().replace(/-/g, '');

/** The candidates `given` names: those it starts, else those that contain it (dashes ignored). */
function matching(ids: readonly string[], given: string, strip: (s: string) => string): string[] {
  const want = strip(given);
  if (want === '') return [];
  const prefixed = ids.filter((id) => strip(id).startsWith(want));
  return prefixed.length > 0 ? prefixed : ids.filter((id) => strip(id).includes(want));
}

function ambiguous(what: string, given: string, matches: readonly string[], hint: string): UsageError {
  const shown = matches.slice(-SHOWN).reverse(); // the newest first
  const more = matches.length - shown.length;
  return new UsageError(`${what} "${given}" is ambiguous: it matches ${matches.length}: ${shown.join(', ')}${more ? `, and ${more} more` : ''}; ${hint}`);
}

/**
 * The full id `given` stands for. A whole UUIDv7 is returned as it is (the
 * command reports it if there is no such session). A part matching one
 * session gives that session's id; matching several is a usage error listing
 * them (exit 2); matching none is not_found (exit 3).
 */
export function resolveSessionId(store: Pick<SessionStore, 'home' | 'listIds'>, given: string): string {
  const text = given.trim().toLowerCase();
  if (UUID_V7.test(text)) return text;
  const matches = /^[0-9a-f-]+$/.test(text) ? matching(store.listIds(), text, hexOf) : [];
  if (matches.length === 1) return matches[0] as string;
  if (matches.length === 0) {
    throw notFound(`session "${given}" not found: no session in ${store.home.sessionsDir} has an id that starts with or contains it (openboa sessions lists them)`);
  }
  throw ambiguous('session id', given, matches, 'type more of the id');
}

/**
 * The waiting tool use `given` names in session `sessionId`: `given` itself
 * when it is one of them (or names none: the command then says what it is
 * waiting on), else the one waiting tool use whose id starts with or
 * contains it (`sevt_` and case ignored). Several: a usage error listing them.
 */
export function resolveWaitingEventId(store: SessionStore, sessionId: string, given: string): string {
  const text = given.trim();
  const waiting = store.snapshot(sessionId, { persist: false }).open_tool_uses.map((u) => u.id);
  if (waiting.includes(text)) return text;
  const matches = matching(waiting, text, (s) => s.toLowerCase().replace(/^sevt_/, ''));
  if (matches.length === 1) return matches[0] as string;
  if (matches.length === 0) return text;
  throw ambiguous('event id', given, matches, `type more of it (openboa status ${sessionId} lists what the session waits on)`);
}
