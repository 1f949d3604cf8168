/**
 * The envelope of an event the runtime writes (event-envelope.ts),
 * validated against the event's schema before anything is written.
 */
import type { Clock } from '../foundation/clock.js';
import type { Ids } from '../foundation/ids.js';
import { EVENT_SCHEMAS, type NewEvent, type SessionEvent } from '../schema/index.js';
import { describeIssues } from './parse-line.js';
import { eventEnvelope } from './event-envelope.js';

export function stampEvent(deps: { ids: Ids; clock: Clock }, e: NewEvent, wakeId?: string): SessionEvent {
  const full = eventEnvelope(deps, e, wakeId);
  const r = EVENT_SCHEMAS[e.type].safeParse(full);
  if (!r.success) throw new Error(`refusing to write an invalid ${e.type} event: ${describeIssues(r.error)}`);
  return full as unknown as SessionEvent;
}
