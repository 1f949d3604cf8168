/**
 * The delegation part of the fold (docs/delegation.md): what a parent's log
 * says about its children, and which deliveries from them were taken.
 *
 *   session.thread_created          → a child record (running)
 *   agent.thread_message_sent       → that child is running again
 *   session.thread_status_idle      → its status and tree usage, as of that run
 *   agent.thread_message_received   → (a report's text, or a message_parent)
 *
 * A delivery is keyed (delivery_key): `run:<child run id>` for the report of
 * a child's run, `msg:<tool use id>` for a message_parent. A repeat (a
 * report delivered again after a crash, or by the daemon's repair racing
 * the child's own delivery) is dropped here: it never becomes pending, so
 * the parent's conversation takes each report in once.
 */
import { roundUsd, type SessionEvent, type SessionSnapshot, type TreeUsage } from '../schema/index.js';

/** message_parent keys kept to recognise repeats (the newest). */
const MESSAGE_KEYS_KEPT = 512;

type Received = Extract<SessionEvent, { type: 'agent.thread_message_received' }>;
type StatusIdle = Extract<SessionEvent, { type: 'session.thread_status_idle' }>;

function child(s: SessionSnapshot, id: string, agent = 'unknown') {
  let c = s.children[id];
  if (!c) {
    c = { agent, title: null, depth: null, created_at: s.updated_at, status: 'running', last_report_run: null, tree_usage: null };
    s.children = { ...s.children, [id]: c };
  }
  return c;
}

const runOf = (key: string) => (key.startsWith('run:') ? key.slice(4) : null);

/**
 * Whether a delivery from a child is new (it becomes pending) or a repeat
 * (dropped). Records it: a report's run, a message's key.
 */
export function acceptDelivery(s: SessionSnapshot, e: Received | StatusIdle): boolean {
  const from = e.type === 'agent.thread_message_received' ? e.from_session_thread_id : e.session_thread_id;
  const run = runOf(e.delivery_key);
  if (run) {
    const c = child(s, from, e.type === 'session.thread_status_idle' ? e.agent_name : (e.from_agent_name ?? undefined));
    // The two lines of one report share its key and come in one write, the message first: a run at or
    // before the last one reported is a repeat.
    if (c.last_report_run !== null && run <= c.last_report_run) return false;
    if (e.type === 'session.thread_status_idle') Object.assign(c, { last_report_run: run, status: e.stop_reason.type, ...(e.tree_usage ? { tree_usage: e.tree_usage } : {}) });
    return true;
  }
  if (s.delivered_messages.includes(e.delivery_key)) return false;
  s.delivered_messages = [...s.delivered_messages, e.delivery_key].slice(-MESSAGE_KEYS_KEPT);
  return true;
}

/** A runtime line of the parent's own run about a child. */
export function applyChildEvent(s: SessionSnapshot, e: SessionEvent): void {
  if (e.type === 'session.thread_created') {
    const c = child(s, e.session_thread_id, e.agent_name);
    Object.assign(c, { agent: e.agent_name, title: e.title ?? null, depth: e.depth ?? null, created_at: e.created_at, status: 'running' });
  } else if (e.type === 'agent.thread_message_sent') {
    child(s, e.to_session_thread_id).status = 'running';
  }
}

const ZERO: TreeUsage = { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, model_requests: 0, cost_usd: 0 };

/** Usage over the session and its descendants: its own, plus each child's latest reported tree. */
export function treeUsageOf(s: SessionSnapshot): TreeUsage {
  const own = s.usage as SessionSnapshot['usage'] & { cost_usd?: number };
  const t: TreeUsage = { ...ZERO, ...own, cost_usd: own.cost_usd ?? 0 };
  for (const c of Object.values(s.children)) {
    if (!c.tree_usage) continue;
    for (const k of Object.keys(ZERO) as Array<keyof TreeUsage>) t[k] += c.tree_usage[k] ?? 0;
  }
  t.cost_usd = roundUsd(t.cost_usd);
  return t;
}
