/**
 * The envelope of an event the runtime writes: a fresh id (or the one the
 * writer promised earlier), the time, the run's id, then the payload (in
 * that key order, for people reading the log). stamp.ts validates the
 * result against the event's schema; a writer that built the payload
 * itself from checked parts (a one-shot `openboa send`'s message) may
 * write it as it is.
 */
import { iso, type Clock } from '../foundation/clock.js';
import type { Ids } from '../foundation/ids.js';
import type { NewEvent } from '../schema/index.js';

export function eventEnvelope(deps: { ids: Ids; clock: Clock }, e: NewEvent, wakeId?: string) {
  const { type, id, ...payload } = e;
  return {
    id: id ?? deps.ids.event(),
    type,
    created_at: iso(deps.clock.now()),
    ...(wakeId ? { wake_id: wakeId } : {}),
    ...payload,
  };
}
