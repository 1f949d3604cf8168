/**
 * Where a person's event goes (SessionStore.deliverUserEvent): appended to
 * the session's log as a commit point (synced under the `run` and `always`
 * policies: durability.ts), or on a home shared between hosts dropped into
 * its inbox/ for the run that holds the lease to move in (shared-home.ts,
 * inbox-drop.ts).
 */
import type { SessionPaths } from '../foundation/home.js';
import type { Durability } from './durability.js';
import { dropInInbox } from './inbox-drop.js';

/** Writes `line` (one stamped event, JSON, no newline) for the session at `p`. */
export function deliverLine(p: SessionPaths, line: string, o: { shared: boolean; durability: Durability }): void {
  if (o.shared) dropInInbox(p, [line], o.durability.policy !== 'never');
  else o.durability.append(p.events, [line], true, [p.events, p.wakeQueue]);
}
