/**
 * A child's report to its parent (docs/delegation.md): when a child
 * session's run ends idle (end_turn, requires_action, an error, the budget),
 * its parent's log gets, in one write, `agent.thread_message_received` with
 * the child's last agent message of that run (bounded) and
 * `session.thread_status_idle` with how it ended and the child's tree usage.
 * The parent wakes on them like on any line appended to its log
 * (trigger `child`).
 *
 * Exactly once. Both lines carry `delivery_key: run:<child run id>`. The
 * child's run writes its ending first and reports after, so a crash in
 * between leaves a child that is idle after a run its parent has no report
 * of: `reportToParent` finds that from the two session.json files alone and
 * delivers it (the daemon calls it whenever it looks at a child, at its
 * start too). Two deliveries that race (the run's own and the daemon's)
 * both land, and the parent's fold takes the first and drops the repeat
 * (store/children-fold.ts), so the parent's conversation reads it once.
 */
import type { AfterCloseHook } from './loop-hooks.js';
import { parseEventLine } from '../store/parse-line.js';
import { cutTail } from '../foundation/text-cut.js';
import type { NewEvent, SessionSnapshot } from '../schema/index.js';
import type { Runtime } from './run-context.js';

/** Characters of the child's last message a report carries (its end). */
export const REPORT_CHARS = 16_000;
/** Bytes of the child's log read back for its last message. */
const TAIL_BYTES = 512 * 1024;

export type ReportOutcome = 'delivered' | 'not_a_child' | 'not_idle' | 'already' | 'no_parent';

/**
 * Delivers the report of the child's last run to its parent when the child
 * is idle after a run the parent has no report of. Safe to call any time,
 * from any process, as often as wanted.
 */
export function reportToParent(rt: Runtime, childId: string, child?: SessionSnapshot): ReportOutcome {
  const s = child ?? rt.store.snapshot(childId, { persist: false });
  const parentId = s.parent_session_id;
  if (!parentId) return 'not_a_child';
  if (s.status !== 'idle' || !s.last_wake_id || !s.stop_reason) return 'not_idle';
  let parent: SessionSnapshot;
  try {
    parent = rt.store.snapshot(parentId, { persist: false });
  } catch {
    return 'no_parent'; // the parent was deleted: nobody to tell
  }
  const known = parent.children[childId]?.last_report_run ?? null;
  if (known !== null && known >= s.last_wake_id) return 'already';
  const key = `run:${s.last_wake_id}`;
  const events: NewEvent[] = [
    { type: 'agent.thread_message_received', from_session_thread_id: childId, from_agent_name: s.agent_id, content: [{ type: 'text', text: lastMessage(rt, childId, s.last_wake_id) }], delivery_key: key },
    { type: 'session.thread_status_idle', session_thread_id: childId, agent_name: s.agent_id, stop_reason: s.stop_reason, stop_details: null, delivery_key: key, tree_usage: s.tree_usage },
  ];
  // The parent's lease is not ours: delivered (on a shared home through its inbox/, in one file).
  rt.store.deliverEvents(parentId, events);
  return 'delivered';
}

/**
 * The child's last agent message of run `runId`, from the tail of its log:
 * the newest agent.message after that run opened, cut to its last
 * REPORT_CHARS; a note when the run said nothing.
 */
function lastMessage(rt: Runtime, childId: string, runId: string): string {
  const snap = rt.store.snapshot(childId, { persist: false });
  const lines = rt.store.readRawBefore(childId, snap.journals.events, TAIL_BYTES);
  const format = rt.store.logFormat(childId);
  for (let i = lines.length - 1; i >= 0; i--) {
    const r = parseEventLine(lines[i]!, rt.deps.clock.now(), format);
    if (r.kind !== 'event') continue;
    const e = r.event;
    if (e.type === 'agent.message' && e.wake_id === runId) {
      const text = e.content.map((b) => b.text).join('\n');
      return text.length > REPORT_CHARS ? `…${cutTail(text, REPORT_CHARS)}` : text;
    }
    if (e.type === 'session.status_running' && e.wake_id === runId && !e.continuation) break;
  }
  return '(the child said nothing in its last run)';
}

/** The after-close hook: a child's run that ended idle reports to its parent (a failure is repaired when the daemon next looks at this child). */
export function childReport(): AfterCloseHook {
  return {
    afterClose(rt, sessionId, after, ending) {
      if (ending.kind !== 'idle' || !after.parent_session_id) return;
      try {
        reportToParent(rt, sessionId, after);
      } catch {
        // the parent's log is not writable now: reportToParent runs again whenever the daemon looks at this child
      }
    },
  };
}
