/**
 * POST /v1/sessions/{id}/pause and …/resume: `openboa pause` and `openboa
 * resume` over HTTP (ours: the hosted API has no pause). Each appends its
 * line through the CLI's operation (core/ops/pause-ops.ts), whatever the
 * state, and answers the event as written with the operation's notes
 * (already paused, not paused, a run in progress stops at its next step).
 */
import { Hono } from 'hono';
import * as z from 'zod';
import { pauseSession, resumeSession } from '../core/ops/pause-ops.js';
import type { AuthEnv } from './auth.js';
import { openSession, personOnly } from './session-access.js';
import type { RouteDeps } from './session-routes.js';
import { jsonBody } from './validate.js';
import { wireEvent } from './wire-objects.js';

const PauseBody = z.strictObject({ reason: z.string().max(1000).nullish() });
const ResumeBody = z.strictObject({});

export function pauseRoutes({ rt, onAppend }: RouteDeps): Hono<AuthEnv> {
  const app = new Hono<AuthEnv>();

  app.post('/sessions/:id/pause', async (c) => {
    const s = openSession(rt, c.get('principal'), c.req.param('id'));
    const body = await jsonBody(c, PauseBody);
    const r = pauseSession(rt.store, s.id, body.reason ?? undefined);
    onAppend(s.id);
    return c.json({ data: [wireEvent(r.event, undefined, s.redactor)], notes: r.notes.map((n) => s.redactor.text(n)) });
  });

  app.post('/sessions/:id/resume', async (c) => {
    personOnly(c.get('principal'), 'resume a session');
    const s = openSession(rt, c.get('principal'), c.req.param('id'));
    await jsonBody(c, ResumeBody);
    const r = resumeSession(rt.store, s.id);
    onAppend(s.id);
    return c.json({ data: [wireEvent(r.event, undefined, s.redactor)], notes: r.notes.map((n) => s.redactor.text(n)) });
  });

  return app;
}
