/**
 * GET …/events: the log as the SDK's cursor pages (`{data, next_page}`),
 * oldest first by default, filtered by `types[]` and `created_at[…]`.
 *
 * A page reads the whole log once: a user event's `processed_at` is the
 * time of the run that took it in, which only a later line says
 * (views/event-view.ts). The cursor is the log line the page ended at, so
 * paging is stable while the log grows (new lines come after it).
 */
import { viewEvents } from '../core/views/event-view.js';
import type { SessionStore } from '../core/store/session-store.js';
import type { Redactor } from '../core/foundation/redact.js';
import { invalidRequest } from './api-error.js';
import { inRange, type ListEventsQuery } from './wire-schemas.js';
import { wireEvent } from './wire-objects.js';

const encode = (line: number) => Buffer.from(`l${line}`).toString('base64url');

function decode(page: string): number {
  const m = /^l(\d{1,12})$/.exec(Buffer.from(page, 'base64url').toString('utf8'));
  if (!m) throw invalidRequest('page: not a cursor this server gave (pass next_page as it came)');
  return Number(m[1]);
}

export function listEvents(store: SessionStore, id: string, redactor: Redactor, q: ListEventsQuery): { data: Record<string, unknown>[]; next_page: string | null } {
  const from = q.page ? decode(q.page) : null;
  const types = q['types[]'] ? new Set(q['types[]']) : null;
  const views = viewEvents(store.readEvents(id).lines).flatMap((v) => ('event' in v ? [v] : []));
  if (q.order === 'desc') views.reverse();
  const out: typeof views = [];
  let more = false;
  for (const v of views) {
    if (from !== null && (q.order === 'asc' ? v.line <= from : v.line >= from)) continue;
    if (types && !types.has(v.event.type)) continue;
    if (!inRange(v.event.created_at, q)) continue;
    if (out.length === q.limit) {
      more = true;
      break;
    }
    out.push(v);
  }
  const last = out[out.length - 1];
  return { data: out.map((v) => wireEvent(v.event, v.event.processed_at, redactor)), next_page: more && last ? encode(last.line) : null };
}
