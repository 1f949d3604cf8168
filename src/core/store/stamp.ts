/**
 * The envelope of an event the runtime writes: a fresh id (or the one the
 * writer promised earlier), the time, the
 * run's id, then the payload (in that key order, for people reading the
 * log), validated against the event's schema before anything is written.
 */
import { iso, type Clock } from '../foundation/clock.js';
import type { Ids } from '../foundation/ids.js';
import { EVENT_SCHEMAS, type NewEvent, type SessionEvent } from '../schema/index.js';
import { describeIssues } from './parse-line.js';

export function stampEvent(deps: { ids: Ids; clock: Clock }, e: NewEvent, wakeId?: string): SessionEvent {
  const { type, id, ...payload } = e;
  const full = {
    id: id ?? deps.ids.event(),
    type,
    created_at: iso(deps.clock.now()),
    ...(wakeId ? { wake_id: wakeId } : {}),
    ...payload,
  };
  const r = EVENT_SCHEMAS[e.type].safeParse(full);
  if (!r.success) throw new Error(`refusing to write an invalid ${e.type} event: ${describeIssues(r.error)}`);
  return full as unknown as SessionEvent;
}
