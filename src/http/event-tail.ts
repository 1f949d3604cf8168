/**
 * GET …/events?order=desc: the newest events without reading the whole log.
 * A person opening a session wants its latest page first; the general
 * listing (event-list.ts) reads every line for each page (a user event's
 * `processed_at` is on a later line), which for a log of 100,000 events is
 * seconds. Newest first, every later line is read before the line it
 * answers, so a page can be read backwards from the end (the snapshot's
 * cursor, plus what was appended since) and stop once it is full.
 *
 * Its cursor (`t<line>:<offset>`: where the page ended, as a byte offset
 * just past a whole line) continues backwards from that point. A user event
 * on such an older page whose run-start line was not read in this request
 * is looked up forward from the page's end, line by line until found.
 *
 * Everything else is the general listing's: ascending order, a created_at
 * range, its own cursors, and the rare logs this reader does not judge
 * alike (a line without created_at, whose time is pinned by the fold; an
 * oversize line): the handler passes those on (next()), unchanged.
 * The answer is the same as the general listing's, page for page
 * (tests/http/event-tail.test.ts holds both to that).
 */
import { Hono } from 'hono';
import { isPauseEventType, isUserEventType, type SessionEvent } from '../core/schema/index.js';
import { MAX_LINE_BYTES, type Cursor } from '../core/store/jsonl.js';
import { parseEventLine } from '../core/store/parse-line.js';
import type { Runtime } from '../core/run/run-context.js';
import type { AuthEnv } from './auth.js';
import { openSession, type SessionAccess } from './session-access.js';
import { queryOf } from './validate.js';
import { ListEventsQuery } from './wire-schemas.js';
import { wireEvent } from './wire-objects.js';

/** Bytes read back per step: a page of 100 ordinary events is about this much. */
const CHUNK = 64 * 1024;

const encode = (c: Cursor) => Buffer.from(`t${c.line}:${c.offset}`).toString('base64url');

function decode(page: string): Cursor | null {
  const m = /^t(\d{1,12}):(\d{1,15})$/.exec(Buffer.from(page, 'base64url').toString('utf8'));
  return m ? { line: Number(m[1]), offset: Number(m[2]), ino: 0 } : null;
}

/** Thrown inside the reader when the general listing must answer instead. */
class PassOn extends Error {}

interface Taken {
  event: SessionEvent;
  /** Where a page that ends at this event continues from (just before its line). */
  before: Cursor;
}

function newestFirst(rt: Runtime, s: SessionAccess, q: ListEventsQuery, end: Cursor, fromEnd: boolean) {
  const format = rt.store.logFormat(s.id);
  const now = rt.deps.clock.now();
  const types = q['types[]'] ? new Set(q['types[]']) : null;
  const processedAt = new Map<string, string>();
  const out: Taken[] = [];
  let more = false;
  let pos = end;
  const parse = (raw: { no: number; text: string; bytes: number; oversize: boolean; badUtf8: boolean }) => {
    if (raw.bytes > MAX_LINE_BYTES) throw new PassOn();
    const p = parseEventLine(raw, now, format);
    if (p.kind === 'event' && p.readTime) throw new PassOn();
    return p;
  };
  read: while (pos.offset > 0) {
    const raws = rt.store.readRawBefore(s.id, pos, CHUNK);
    if (raws.length === 0) break;
    let at = pos.offset;
    for (let k = raws.length - 1; k >= 0; k--) {
      const raw = raws[k]!;
      at -= raw.bytes + 1;
      const p = parse(raw);
      if (p.kind !== 'event') continue;
      const e = p.event;
      // Read newest first, the earliest run that took an event in is the last one set.
      if (e.type === 'session.status_running') for (const id of e.processed_event_ids) processedAt.set(id, e.created_at);
      if (types && !types.has(e.type)) continue;
      if (out.length === q.limit) {
        more = true;
        break read;
      }
      out.push({ event: e, before: { offset: at, line: raw.no - 1, ino: 0 } });
    }
    pos = { offset: at, line: raws[0]!.no - 1, ino: 0 };
  }
  // An older page: a user event taken in by a run whose line is past this page's end.
  const missing = new Set(fromEnd ? [] : out.filter((t) => isUserEventType(t.event.type) && !isPauseEventType(t.event.type) && !processedAt.has(t.event.id)).map((t) => t.event.id));
  let ahead = end;
  while (missing.size > 0) {
    const r = rt.store.readRaw(s.id, ahead, { maxLines: 500 });
    if (r.reset || r.lines.length === 0) break;
    for (const raw of r.lines) {
      const p = parse(raw);
      if (p.kind !== 'event' || p.event.type !== 'session.status_running') continue;
      for (const id of p.event.processed_event_ids) if (missing.delete(id)) processedAt.set(id, p.event.created_at);
    }
    ahead = r.cursor;
  }
  const last = out[out.length - 1];
  return {
    data: out.map(({ event: e }) => wireEvent(e, isUserEventType(e.type) ? (processedAt.get(e.id) ?? (isPauseEventType(e.type) ? e.created_at : null)) : e.created_at, s.redactor)),
    next_page: more && last ? encode(last.before) : null,
  };
}

export function eventTailRoutes(rt: Runtime): Hono<AuthEnv> {
  const app = new Hono<AuthEnv>();

  app.get('/sessions/:id/events', async (c, next) => {
    const q = queryOf(c, ListEventsQuery);
    const ranged = Object.keys(q).some((k) => k.startsWith('created_at'));
    const tail = q.page ? decode(q.page) : null;
    if (q.order !== 'desc' || ranged || (q.page && !tail)) return next();
    const s = openSession(rt, c.get('principal'), c.req.param('id'));
    let end = tail;
    if (!end) {
      // The end of the log: the fold's cursor, then what was appended since.
      const after = rt.store.readRaw(s.id, s.snapshot.journals.events);
      if (after.reset) return next();
      end = after.cursor;
    }
    try {
      return c.json(newestFirst(rt, s, q, end, tail === null));
    } catch (e) {
      if (e instanceof PassOn) return next();
      throw e;
    }
  });

  return app;
}
