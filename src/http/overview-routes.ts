/**
 * GET /v1/sessions/{id}/overview: what `openboa status` tells of a session
 * beyond the session object, for a person deciding what to do next: why it
 * waits (each tool use waiting on an answer, with an escalation's options),
 * when it is next revisited or retried, its last error, whether it is paused
 * and since when, its children with their cost, and usage over its tree.
 *
 * The same core reads as the CLI's `status` (session-ops.ts sessionStatus,
 * resolve-escalation.ts escalationsOf, views/children-view.ts childrenOf),
 * shaped as JSON and redacted with the session's secrets. A run token's
 * overview of one of its children has `children: null`: the token sees its
 * own session and its direct children, not theirs (seesChildrenOf).
 */
import { Hono } from 'hono';
import { sessionStatus } from '../core/ops/session-ops.js';
import { escalationsOf } from '../core/ops/resolve-escalation.js';
import type { Runtime } from '../core/run/run-context.js';
import { childrenOf } from '../core/views/children-view.js';
import type { AuthEnv } from './auth.js';
import { openSession, seesChildrenOf } from './session-access.js';

export function overviewRoutes(rt: Runtime): Hono<AuthEnv> {
  const app = new Hono<AuthEnv>();

  app.get('/sessions/:id/overview', async (c) => {
    const who = c.get('principal');
    const s = openSession(rt, who, c.req.param('id'));
    const st = await sessionStatus(rt.store, rt.deps.clock, s.id);
    const snap = st.snapshot;
    const escalations = escalationsOf(rt.store, s.id, st.requires_action);
    return c.json(
      s.redactor.deep({
        id: s.id,
        type: 'session_overview',
        status: snap.status,
        stop_reason: snap.stop_reason,
        waiting: st.requires_action.map((a) => ({ ...a, escalation: escalations.get(a.id) ?? null })),
        paused: snap.paused,
        archived_at: snap.archived_at,
        next_wake_at: st.next_wake_at,
        retry_at: snap.retry_at,
        consecutive_failures: snap.consecutive_failures,
        last_error: snap.last_error,
        pending_events: st.pending_events.length,
        lease_held: st.lease.held,
        outcome: snap.outcome,
        children: seesChildrenOf(who, s.id) ? childrenOf(rt.store, snap) : null,
        tree_usage: snap.tree_usage,
      }),
    );
  });

  return app;
}
