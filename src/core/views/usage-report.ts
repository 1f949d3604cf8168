/**
 * What sessions spent (docs/delegation.md, "Usage and cost"), read from
 * their snapshots (session.json continued with any new lines): one
 * session, a session with its descendants, or the whole home by agent.
 *
 * `usage` is a session's own (its requests, its graders', its summaries');
 * `tree_usage` is that plus each child's latest report (children-fold.ts),
 * so a child still running counts as of its last report. A tree is walked
 * through each session's `children` (what its log tells of them); a child
 * counts only when its own session.created names the parent, so a line that
 * merely claims a child cannot graft another session's costs onto a tree.
 */
import fs from 'node:fs';
import { DefinitionId, roundUsd, SESSION_FORMAT, Usage, type SessionSnapshot, type TreeUsage } from '../schema/index.js';
import type { SessionStore } from '../store/session-store.js';
import type { Home } from '../foundation/home.js';
import { loadAgent } from '../definitions/definitions.js';
import { priceOf } from '../definitions/pricing.js';

export type UsageTotals = TreeUsage;

/** One session's usage, as the usage views show it. */
export interface SessionUsage {
  session_id: string;
  agent_id: string;
  title: string | null;
  status: string;
  parent_session_id: string | null;
  depth: number;
  usage: UsageTotals;
  tree_usage: UsageTotals;
}

/** A session and its descendants; a child that cannot be read (or is not this session's) has `error` instead of usage. */
export type UsageNode = (SessionUsage & { children: UsageNode[] }) | { session_id: string; error: string; children: [] };

export interface AgentUsage {
  agent_id: string;
  sessions: number;
  usage: UsageTotals;
}

export interface HomeUsage {
  /** By agent, the most expensive first (then by id). */
  agents: AgentUsage[];
  total: { sessions: number; usage: UsageTotals };
  /** Sessions whose files could not be read. */
  unreadable: Array<{ session_id: string; error: string }>;
}

export const zeroUsage = (): UsageTotals => ({ input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, model_requests: 0, cost_usd: 0 });

/** Adds `b` into `a` (costs rounded to a billionth of a dollar). */
export function addTotals(a: UsageTotals, b: Partial<UsageTotals>): UsageTotals {
  a.input_tokens += b.input_tokens ?? 0;
  a.output_tokens += b.output_tokens ?? 0;
  a.cache_creation_input_tokens += b.cache_creation_input_tokens ?? 0;
  a.cache_read_input_tokens += b.cache_read_input_tokens ?? 0;
  a.model_requests += b.model_requests ?? 0;
  a.cost_usd = roundUsd(a.cost_usd + (b.cost_usd ?? 0));
  return a;
}

function view(s: SessionSnapshot): SessionUsage {
  return {
    session_id: s.id,
    agent_id: s.agent_id,
    title: s.title,
    status: s.status,
    parent_session_id: s.parent_session_id,
    depth: s.depth,
    usage: addTotals(zeroUsage(), s.usage),
    tree_usage: { ...s.tree_usage },
  };
}

/** One session's usage and its tree's (throws not_found for an unknown id). */
export function sessionUsage(store: SessionStore, id: string): SessionUsage {
  return view(store.snapshot(id));
}

/**
 * The session and its descendants, each with its own usage and tree usage,
 * children in the order they were spawned. Each session is visited once,
 * whatever its records say.
 */
export function usageTree(store: SessionStore, id: string): UsageNode {
  const seen = new Set<string>([id]);
  const walk = (s: SessionSnapshot): UsageNode => {
    const children: UsageNode[] = [];
    const ids = Object.entries(s.children)
      .sort(([a, x], [b, y]) => x.created_at.localeCompare(y.created_at) || a.localeCompare(b))
      .map(([cid]) => cid);
    for (const cid of ids) {
      if (seen.has(cid)) continue;
      seen.add(cid);
      children.push(child(s.id, cid));
    }
    return { ...view(s), children };
  };
  const child = (parent: string, cid: string): UsageNode => {
    let c: SessionSnapshot;
    try {
      c = store.snapshot(cid);
    } catch (e) {
      return { session_id: cid, error: (e as Error).message, children: [] };
    }
    if (c.parent_session_id !== parent) return { session_id: cid, error: `session ${cid} names ${c.parent_session_id ?? 'no parent'} as its parent, not ${parent}`, children: [] };
    return walk(c);
  };
  return walk(store.snapshot(id));
}

/**
 * A session's agent and own usage for the home view. session.json answers
 * when it is current (its events cursor is at the end of the log it was
 * folded from: same file, same size), which costs one read and one stat and
 * no fold; otherwise, or when anything about it is off, the full snapshot.
 * A whole home of 10,000 sessions is read this way in about a second.
 */
function ownUsage(store: SessionStore, id: string): { agent_id: string; usage: Usage } {
  const p = store.paths(id);
  try {
    const j: unknown = JSON.parse(fs.readFileSync(p.snapshot, 'utf8'));
    const st = fs.statSync(p.events);
    if (typeof j === 'object' && j !== null) {
      const s = j as { format?: unknown; id?: unknown; agent_id?: unknown; usage?: unknown; journals?: { events?: { offset?: unknown; ino?: unknown } } };
      const agent = DefinitionId.safeParse(s.agent_id);
      const usage = Usage.safeParse(s.usage);
      if (s.format === SESSION_FORMAT && s.id === id && s.journals?.events?.offset === st.size && s.journals.events.ino === st.ino && agent.success && usage.success) return { agent_id: agent.data, usage: usage.data };
    }
  } catch {
    // no session.json (or no log): the snapshot below says what is there
  }
  const s = store.snapshot(id);
  return { agent_id: s.agent_id, usage: s.usage };
}

/** Every session of the home, summed by agent (each session's own usage, so nothing counts twice). */
export function homeUsage(store: SessionStore): HomeUsage {
  const by = new Map<string, AgentUsage>();
  const total = { sessions: 0, usage: zeroUsage() };
  const unreadable: HomeUsage['unreadable'] = [];
  for (const id of store.listIds()) {
    let s: { agent_id: string; usage: Usage };
    try {
      s = ownUsage(store, id);
    } catch (e) {
      unreadable.push({ session_id: id, error: (e as Error).message });
      continue;
    }
    let a = by.get(s.agent_id);
    if (!a) by.set(s.agent_id, (a = { agent_id: s.agent_id, sessions: 0, usage: zeroUsage() }));
    a.sessions += 1;
    addTotals(a.usage, s.usage);
    total.sessions += 1;
    addTotals(total.usage, s.usage);
  }
  const agents = [...by.values()].sort((x, y) => y.usage.cost_usd - x.usage.cost_usd || x.agent_id.localeCompare(y.agent_id));
  return { agents, total, unreadable };
}

/** One row of a breakdown: an agent's requests to one model on one UTC day. */
export interface UsageRow {
  agent_id: string;
  model: string;
  /** The UTC day, YYYY-MM-DD, of the requests' ends. */
  day: string;
  usage: UsageTotals;
  /**
   * false when the model has no price (neither the agent's `pricing` nor the
   * default table names it): its requests were recorded at cost 0, which is
   * not what they cost. `usage.cost_usd` is then 0 and means "unknown".
   */
  priced: boolean;
}

export interface UsageBreakdown {
  /** By day, then agent, then model. */
  rows: UsageRow[];
  /** Sessions whose logs could not be read. */
  unreadable: Array<{ session_id: string; error: string }>;
  /** The models with no price, named once. */
  unpriced: string[];
}

/** Lines read at a time from a log: bounds the memory a long log takes. */
const CHUNK = 5000;

/**
 * Every model request of the given sessions (the whole home by default; a
 * session's tree: usageTreeIds), summed by agent, model and UTC day, from
 * each request's span.model_request_end (its usage and recorded cost) and the
 * model its span.model_request_start named. `sinceMs`: only requests that
 * ended at or after it. Outcome graders' and summaries' requests count too
 * (they are the session's). Reads every log whole, in chunks.
 */
export function usageBreakdown(store: SessionStore, o: { ids?: readonly string[]; sinceMs?: number } = {}): UsageBreakdown {
  const priced = pricedIn(store.home);
  const rows = new Map<string, UsageRow>();
  const unreadable: UsageBreakdown['unreadable'] = [];
  for (const id of o.ids ?? store.listIds()) {
    try {
      const agent = store.snapshot(id).agent_id;
      const models = new Map<string, string>();
      let cursor;
      for (;;) {
        const r = store.readEvents(id, cursor, { maxLines: CHUNK });
        for (const l of r.lines) {
          if (l.kind !== 'event') continue;
          const e = l.event;
          if (e.type === 'span.model_request_start') models.set(e.id, e.model ?? 'unknown');
          if (e.type !== 'span.model_request_end') continue;
          const at = Date.parse(e.created_at);
          if (o.sinceMs !== undefined && at < o.sinceMs) continue;
          const model = models.get(e.model_request_start_id) ?? 'unknown';
          const day = e.created_at.slice(0, 10);
          const key = `${day}\u0000${agent}\u0000${model}`;
          let row = rows.get(key);
          if (!row) rows.set(key, (row = { agent_id: agent, model, day, usage: zeroUsage(), priced: priced(agent, model) }));
          addTotals(row.usage, { ...e.model_usage, model_requests: 1, cost_usd: e.cost_usd });
        }
        if (r.lines.length < CHUNK) break;
        cursor = r.cursor;
      }
    } catch (e) {
      unreadable.push({ session_id: id, error: (e as Error).message });
    }
  }
  const sorted = [...rows.values()].sort((a, b) => a.day.localeCompare(b.day) || a.agent_id.localeCompare(b.agent_id) || a.model.localeCompare(b.model));
  return { rows: sorted, unreadable, unpriced: [...new Set(sorted.filter((r) => !r.priced).map((r) => r.model))].sort() };
}

/** A session and every descendant usageTree reaches (the sessions a tree's breakdown reads). */
export function usageTreeIds(store: SessionStore, id: string): string[] {
  const out: string[] = [];
  const walk = (n: UsageNode) => {
    out.push(n.session_id);
    n.children.forEach(walk);
  };
  walk(usageTree(store, id));
  return out;
}

/** Whether an agent's model has a price now: its agent.yaml `pricing`, else the default table (an agent that does not load: the table alone). */
function pricedIn(home: Home): (agentId: string, model: string) => boolean {
  const pricing = new Map<string, Parameters<typeof priceOf>[0]>();
  return (agentId, model) => {
    if (!pricing.has(agentId)) {
      try {
        pricing.set(agentId, loadAgent(home, agentId).def.pricing);
      } catch {
        pricing.set(agentId, {});
      }
    }
    return priceOf(pricing.get(agentId)!, model).source !== 'unknown';
  };
}

export const USAGE_KEYS = ['agent', 'model', 'day'] as const;
export type UsageKey = (typeof USAGE_KEYS)[number];

/** A breakdown's rows summed over the keys not named; `unpriced_requests`: requests of a model with no price, whose cost is not in `usage.cost_usd`. */
export interface UsageGroup {
  agent_id?: string;
  model?: string;
  day?: string;
  usage: UsageTotals;
  unpriced_requests: number;
}

/** The rows grouped by `by` (in the order of USAGE_KEYS), in the rows' order. */
export function groupUsage(rows: readonly UsageRow[], by: readonly UsageKey[]): UsageGroup[] {
  const out = new Map<string, UsageGroup>();
  for (const r of rows) {
    const g: UsageGroup = { usage: zeroUsage(), unpriced_requests: 0 };
    if (by.includes('agent')) g.agent_id = r.agent_id;
    if (by.includes('model')) g.model = r.model;
    if (by.includes('day')) g.day = r.day;
    const key = JSON.stringify([g.agent_id, g.model, g.day]);
    const into = out.get(key) ?? (out.set(key, g), g);
    addTotals(into.usage, r.usage);
    if (!r.priced) into.unpriced_requests += r.usage.model_requests;
  }
  return [...out.values()];
}
