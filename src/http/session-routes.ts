/**
 * /v1/sessions: create, retrieve, update (POST), list, archive, delete, as
 * client.beta.sessions calls them. Each handler reads like a CLI command: a
 * schema, one core operation (create-session.ts, session-ops.ts,
 * session-lifecycle.ts), the session object back.
 */
import { Hono } from 'hono';
import { iso } from '../core/foundation/clock.js';
import { createSession } from '../core/ops/create-session.js';
import { updateSession } from '../core/ops/session-ops.js';
import { archiveSession, deleteSession } from '../core/ops/session-lifecycle.js';
import type { Runtime } from '../core/run/run-context.js';
import type { AuthEnv } from './auth.js';
import { appendEvents } from './event-append.js';
import { listSessions } from './session-list.js';
import { spawnFromRun } from './run-spawn.js';
import { openSession, personOnly, redactorOf } from './session-access.js';
import { jsonBody, queryOf } from './validate.js';
import { CreateSessionBody, ListSessionsQuery, UpdateSessionBody } from './wire-schemas.js';
import { wireSession } from './wire-objects.js';

export interface RouteDeps {
  rt: Runtime;
  /** Called after events were appended to a session (an in-process daemon looks at it at once). */
  onAppend: (sessionId: string) => void;
}

export function sessionRoutes({ rt, onAppend }: RouteDeps): Hono<AuthEnv> {
  const app = new Hono<AuthEnv>();
  const { store } = rt;

  app.post('/sessions', async (c) => {
    const body = await jsonBody(c, CreateSessionBody);
    const who = c.get('principal');
    if (who.kind === 'run') {
      // A run spawns a child of its own session, under its delegation limits (run-spawn.ts); never a root session.
      const child = spawnFromRun(rt, who.claims, body);
      onAppend(child.id);
      return c.json(wireSession(child, redactorOf(rt, child)));
    }
    const agent = typeof body.agent === 'string' ? body.agent : body.agent.id;
    let snap = createSession(store, {
      agent,
      env: body.environment_id,
      ...(body.title != null ? { title: body.title } : {}),
      ...(body.metadata ? { metadata: body.metadata } : {}),
    });
    if (body.initial_events?.length) {
      appendEvents(store, snap.id, body.initial_events);
      snap = store.snapshot(snap.id);
      onAppend(snap.id);
    }
    return c.json(wireSession(snap, redactorOf(rt, snap)));
  });

  app.get('/sessions', (c) => c.json(listSessions(rt, c.get('principal'), queryOf(c, ListSessionsQuery))));

  app.get('/sessions/:id', (c) => {
    const s = openSession(rt, c.get('principal'), c.req.param('id'));
    return c.json(wireSession(s.snapshot, s.redactor));
  });

  app.post('/sessions/:id', async (c) => {
    personOnly(c.get('principal'), 'change a session');
    const s = openSession(rt, c.get('principal'), c.req.param('id'));
    const body = await jsonBody(c, UpdateSessionBody);
    const change = {
      ...(body.title !== undefined ? { title: body.title } : {}),
      ...(body.metadata != null ? { metadata: body.metadata } : {}),
    };
    // An update that changes nothing answers the session as it is (the SDK may send {}).
    if (Object.keys(change).length === 0) return c.json(wireSession(s.snapshot, s.redactor));
    updateSession(store, s.id, change);
    return c.json(wireSession(store.snapshot(s.id), s.redactor));
  });

  app.post('/sessions/:id/archive', (c) => {
    const s = openSession(rt, c.get('principal'), c.req.param('id'));
    archiveSession(store, s.id, true);
    return c.json(wireSession(store.snapshot(s.id), s.redactor));
  });

  app.delete('/sessions/:id', async (c) => {
    personOnly(c.get('principal'), 'delete a session');
    const s = openSession(rt, c.get('principal'), c.req.param('id'));
    await deleteSession(store, s.id, iso(rt.deps.clock.now()));
    return c.json({ id: s.id, type: 'session_deleted' });
  });

  return app;
}
