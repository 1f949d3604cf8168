/**
 * Delegation's events (docs/delegation.md): a child's reports and messages
 * in its parent's log (delivered exactly once: store/children-fold.ts), the
 * parent's records of its children, spawns refused, and when work was asked
 * of a session relative to the newest interrupt above it (an interrupt stops
 * a tree still spawning).
 */
import { acceptDelivery, applyChildEvent, treeUsageOf } from '../store/children-fold.js';
import type { SessionEvent, SessionSnapshot } from '../schema/index.js';
import { capability, type EventOf } from './event-kind.js';

/** How a child's delivery reads to its parent: who it is from, and what it said or how its run ended. */
export function childNote(e: EventOf<'agent.thread_message_received' | 'session.thread_status_idle'>): string {
  if (e.type === 'session.thread_status_idle') {
    const why = e.stop_reason.type === 'requires_action' ? 'requires_action: it waits for a person (openboa status on it lists what)' : e.stop_reason.type;
    return `[child session ${e.session_thread_id} (agent ${e.agent_name}) is idle: ${why}]`;
  }
  const text = e.content.map((b) => b.text).join('\n');
  const what = e.delivery_key.startsWith('msg:') ? 'writes' : 'reports';
  // The child's words are quoted line by line: nothing it writes can start a line that reads as the runtime's or another child's.
  const quoted = (text || '(no message)').split('\n').map((l) => `> ${l}`).join('\n');
  return `[child session ${e.from_session_thread_id}${e.from_agent_name ? ` (agent ${e.from_agent_name})` : ''} ${what}; its words, quoted:]\n${quoted}`;
}

const later = (a: string | null, b: string) => (a === null || Date.parse(b) > Date.parse(a) ? b : a);

/**
 * An accepted user event's part in stopping a tree: the newest interrupt,
 * and when the newest work asked of the session was asked for (a parent's
 * run stamps its own opening as `mandate_at`).
 */
function noteAsked(s: SessionSnapshot, e: SessionEvent): void {
  if (e.type === 'user.interrupt') s.last_interrupt_at = later(s.last_interrupt_at, e.created_at);
  else if (e.type === 'user.message') s.mandate_at = later(s.mandate_at, e.mandate_at ?? e.created_at);
  else if (e.type === 'user.define_outcome') s.mandate_at = later(s.mandate_at, e.created_at);
}

const delivery = {
  fold: { admit: acceptDelivery },
  conversation: { takenIn: childNote, carriesContent: true },
  midRun: true,
};

export const delegation = capability({
  name: 'delegation',
  kinds: {
    'agent.thread_message_received': delivery,
    'session.thread_status_idle': { ...delivery, conversation: { takenIn: childNote } },
    'session.thread_created': { fold: { apply: applyChildEvent } },
    'agent.thread_message_sent': { fold: { apply: applyChildEvent } },
    'session.spawn_refused': {
      fold: {
        apply(s, e) {
          s.spawn_refusals = { count: s.spawn_refusals.count + 1, last: { reason: e.reason, message: e.message, at: e.created_at } };
        },
      },
    },
    'user.interrupt': { fold: { accepted: noteAsked } },
    'user.message': { fold: { accepted: noteAsked } },
    'user.define_outcome': { fold: { accepted: noteAsked } },
  },
  // Usage over the session and its descendants, from the children's reports.
  finish: (s) => {
    s.tree_usage = treeUsageOf(s);
  },
});
