/**
 * Where a person's events go (SessionStore.deliverEvents, and the lean `send`): appended to
 * the session's log as a commit point (synced under the `run` and `always`
 * policies: durability.ts), or on a home shared between hosts dropped into
 * its inbox/ for the run that holds the lease to move in (shared-home.ts,
 * inbox-drop.ts) and the home's doorbell rung (ring.ts: a polling daemon
 * on another host hears it within about 100 ms).
 */
import path from 'node:path';
import type { SessionPaths } from '../foundation/home.js';
import type { Durability } from './durability.js';
import { dropInInbox } from './inbox-drop.js';
import { ring } from './ring.js';

/** Writes `lines` (stamped events, JSON, no newline) for the session at `p`, in one write. */
export function deliverLines(p: SessionPaths, lines: readonly string[], o: { shared: boolean; durability: Durability }): void {
  if (o.shared) {
    dropInInbox(p, lines, o.durability.policy !== 'never');
    // After the rename: a daemon that hears the ring finds the file (ring.ts).
    ring(path.dirname(p.dir), path.basename(p.dir));
  } else o.durability.append(p.events, lines, true, [p.events, p.wakeQueue]);
}
