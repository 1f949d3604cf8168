/**
 * Where a person's events go (SessionStore.deliverEvents, and the lean `send`): appended to
 * the session's log as a commit point (synced under the `run` and `always`
 * policies: durability.ts), or on a home shared between hosts dropped into
 * its inbox/ for the run that holds the lease to move in (shared-home.ts,
 * inbox-drop.ts).
 */
import type { SessionPaths } from '../foundation/home.js';
import type { Durability } from './durability.js';
import { dropInInbox } from './inbox-drop.js';

/** Writes `lines` (stamped events, JSON, no newline) for the session at `p`, in one write. */
export function deliverLines(p: SessionPaths, lines: readonly string[], o: { shared: boolean; durability: Durability }): void {
  if (o.shared) dropInInbox(p, lines, o.durability.policy !== 'never');
  else o.durability.append(p.events, lines, true, [p.events, p.wakeQueue]);
}
