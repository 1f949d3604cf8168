/**
 * /v1/sessions/{id}/events: send (POST {events}), list (cursor pages), and
 * stream (Server-Sent Events, stream-hub.ts), as client.beta.sessions.events
 * calls them.
 *
 * `event_deltas[]` is accepted and answered with whole events: the text of
 * a reply arrives as one agent.message when the model's reply is recorded,
 * not as event_start / event_delta previews (docs/http.md says why).
 */
import { Hono } from 'hono';
import { runIsLive, type AuthEnv } from './auth.js';
import { appendEvents } from './event-append.js';
import { listEvents } from './event-list.js';
import { openSession } from './session-access.js';
import type { RouteDeps } from './session-routes.js';
import type { StreamHub } from './stream-hub.js';
import { jsonBody, queryOf } from './validate.js';
import { ListEventsQuery, SendEventsBody, StreamQuery } from './wire-schemas.js';
import { wireEvent } from './wire-objects.js';

export function eventRoutes({ rt, onAppend }: RouteDeps, hub: StreamHub): Hono<AuthEnv> {
  const app = new Hono<AuthEnv>();

  app.post('/sessions/:id/events', async (c) => {
    const s = openSession(rt, c.get('principal'), c.req.param('id'));
    const body = await jsonBody(c, SendEventsBody);
    const written = appendEvents(rt.store, s.id, body.events);
    onAppend(s.id);
    return c.json({ data: written.map((e) => wireEvent(e, undefined, s.redactor)) });
  });

  app.get('/sessions/:id/events', (c) => {
    const s = openSession(rt, c.get('principal'), c.req.param('id'));
    return c.json(listEvents(rt.store, s.id, s.redactor, queryOf(c, ListEventsQuery)));
  });

  app.get('/sessions/:id/events/stream', (c) => {
    const s = openSession(rt, c.get('principal'), c.req.param('id'));
    queryOf(c, StreamQuery);
    const who = c.get('principal');
    // A run's stream lasts as long as the run (its token is checked at each request only).
    const run = who.kind === 'run' ? { runId: who.claims.runId, live: () => runIsLive(rt, who.claims) } : undefined;
    const body = hub.open(s.id, s.redactor, c.req.raw.signal, run);
    return new Response(body, {
      headers: {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache, no-transform',
        connection: 'keep-alive',
        'x-accel-buffering': 'no',
      },
    });
  });

  return app;
}
