/**
 * agent.yaml's `heartbeat:` made real (docs/daemon.md, "Heartbeats"). A
 * root session of an agent with a heartbeat keeps one recurring revisit
 * with source `heartbeat` in its wake queue; its firings are taken in and
 * consumed like any revisit's, so the daemon's one timer and the log's
 * rules (a missed firing runs once, a restart repeats none) cover it.
 *
 * The queue is brought in line with agent.yaml under the session's lease,
 * before a run plans (wake.ts): a heartbeat added to agent.yaml is
 * scheduled, one changed is replaced, one removed is cancelled, before a
 * firing of the old one could start a run. So a session takes up its
 * agent's heartbeat at its next run (or `openboa wake`): adding a heartbeat
 * to an agent with 10,000 old sessions wakes none of them by itself.
 * Children never have one (their parent drives them).
 */
import { iso } from '../foundation/clock.js';
import { loadAgent } from '../definitions/definitions.js';
import { firstFiringFrom } from '../schedule/recurrence.js';
import { recurrenceOf, sameRecurrence, type HeartbeatSettings, type SessionSnapshot } from '../schema/index.js';
import type { Runtime } from './run-context.js';

/**
 * Makes the session's heartbeat revisits match its agent's `heartbeat:`
 * (call under the lease). Returns whether it wrote to the wake queue. An
 * agent.yaml that does not load changes nothing: the run reports it.
 */
export function reconcileHeartbeat(rt: Runtime, sessionId: string, snap: SessionSnapshot): boolean {
  if (snap.status === 'terminated' || snap.archived_at !== null) return false;
  let hb: HeartbeatSettings | undefined;
  try {
    hb = loadAgent(rt.home, snap.agent_id).def.heartbeat;
  } catch {
    return false;
  }
  const want = hb && snap.parent_session_id === null ? { rule: recurrenceOf(hb), reason: hb.message } : null;
  const have = snap.pending_wakes.filter((w) => w.source === 'heartbeat');
  const keep = want ? have.find((w) => sameRecurrence(w.recurrence, want.rule) && w.reason === want.reason) : undefined;
  const drop = have.filter((w) => w !== keep).map((w) => w.id);
  const why = !hb ? 'the heartbeat was removed from agent.yaml' : want ? 'the heartbeat changed in agent.yaml' : 'a child session has no heartbeat';
  if (drop.length) rt.store.settleWakes(sessionId, 'wake.cancelled', drop, { reason: why });
  const first = want?.rule && !keep ? firstFiringFrom(want.rule, rt.deps.clock.now()) : null;
  if (want?.rule && first !== null) rt.store.scheduleWake(sessionId, { due_at: iso(first), reason: want.reason, source: 'heartbeat', recurrence: want.rule });
  return drop.length > 0 || first !== null;
}
