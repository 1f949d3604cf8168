/**
 * A session id as a person types it: the whole UUIDv7, or any prefix of it
 * that names exactly one session of the home (like git's abbreviated hashes).
 * The dispatcher resolves every argument named `id` through here, so every
 * command takes a prefix without knowing it.
 */
import { UUID_V7 } from '../core/schema/index.js';
import { notFound } from '../core/errors.js';
import type { SessionStore } from '../core/store/session-store.js';
import { UsageError } from './command.js';

/** How many candidates an ambiguous prefix names before "and N more". */
const SHOWN = 8;

/**
 * The full id `given` stands for. A whole UUIDv7 is returned as it is (the
 * command reports it if there is no such session). A prefix matching one
 * session gives that session's id; matching several is a usage error listing
 * them (exit 2); matching none is not_found (exit 3).
 */
export function resolveSessionId(store: SessionStore, given: string): string {
  const text = given.trim().toLowerCase();
  if (UUID_V7.test(text)) return text;
  const matches = /^[0-9a-f][0-9a-f-]*$/.test(text) ? store.listIds().filter((id) => id.startsWith(text)) : [];
  if (matches.length === 1) return matches[0] as string;
  if (matches.length === 0) {
    throw notFound(`session "${given}" not found: no session in ${store.home.sessionsDir} has an id that starts with it (openboa sessions lists them)`);
  }
  const shown = matches.slice(-SHOWN).reverse(); // the newest first
  const more = matches.length - shown.length;
  throw new UsageError(`session id prefix "${given}" is ambiguous: it matches ${matches.length} sessions: ${shown.join(', ')}${more ? `, and ${more} more` : ''}; type more of the id`);
}
