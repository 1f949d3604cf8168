/**
 * /v1/sessions/{id}/events: send (POST {events}), list (cursor pages), and
 * stream (Server-Sent Events, stream-hub.ts), as client.beta.sessions.events
 * calls them.
 *
 * With `event_deltas[]`, the stream also carries event_start / event_delta
 * previews of a run in this process (stream-hub.ts); the response's
 * `openboa-event-deltas` header says `served`, or `unavailable` where no
 * run shares the server's process (docs/http.md).
 */
import { Hono } from 'hono';
import { runIsLive, type AuthEnv } from './auth.js';
import { appendEvents } from './event-append.js';
import { listEvents } from './event-list.js';
import { openSession, personOnly, RUN_TOKEN_EVENTS } from './session-access.js';
import type { RouteDeps } from './session-routes.js';
import type { StreamHub } from './stream-hub.js';
import { jsonBody, queryOf } from './validate.js';
import { ListEventsQuery, SendEventsBody, StreamQuery } from './wire-schemas.js';
import { wireEvent } from './wire-objects.js';

export function eventRoutes({ rt, onAppend }: RouteDeps, hub: StreamHub): Hono<AuthEnv> {
  const app = new Hono<AuthEnv>();

  app.post('/sessions/:id/events', async (c) => {
    const who = c.get('principal');
    const s = openSession(rt, who, c.req.param('id'));
    const body = await jsonBody(c, SendEventsBody);
    body.events.forEach((e, i) => {
      if (!RUN_TOKEN_EVENTS.has(e.type)) personOnly(who, `send ${e.type} (events.${i})`);
    });
    const written = appendEvents(rt.store, s.id, body.events, c.req.header('traceparent') ?? null);
    onAppend(s.id);
    return c.json({ data: written.map((e) => wireEvent(e, undefined, s.redactor)) });
  });

  app.get('/sessions/:id/events', (c) => {
    const s = openSession(rt, c.get('principal'), c.req.param('id'));
    return c.json(listEvents(rt.store, s.id, s.redactor, queryOf(c, ListEventsQuery)));
  });

  app.get('/sessions/:id/events/stream', (c) => {
    const s = openSession(rt, c.get('principal'), c.req.param('id'));
    const q = queryOf(c, StreamQuery);
    const who = c.get('principal');
    // A run's stream lasts as long as the run (its token is checked at each request only).
    const run = who.kind === 'run' ? { run: { runId: who.claims.runId, live: () => runIsLive(rt, who.claims) } } : {};
    const deltas = q['event_deltas[]'] ?? [];
    const body = hub.open(s.id, s.redactor, c.req.raw.signal, { ...run, deltas });
    return new Response(body, {
      headers: {
        ...(deltas.length ? { 'openboa-event-deltas': hub.servesDeltas ? 'served' : 'unavailable' } : {}),
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache, no-transform',
        connection: 'keep-alive',
        'x-accel-buffering': 'no',
      },
    });
  });

  return app;
}
