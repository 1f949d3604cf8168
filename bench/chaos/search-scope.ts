/**
 * Chaos part `search`: what a search returns belongs to the hit it names.
 *
 * Several agents' sessions share words, and each agent's lines carry its own
 * canary (a token no other agent's line holds). Then `openboa search <words>
 * --agent A --json` (the path of the agent's `search_sessions` tool too) and
 * home-wide searches, through the built CLI. Invariants, each 0:
 *
 * - cross_agent_hits:  a hit of an agent-scoped search whose agent is another;
 * - foreign_text:      a snippet or title of an agent-scoped search holding
 *                      another agent's canary;
 * - wrong_event_text:  a snippet whose words are not its own event's text
 *                      (the snippet of one row shown for another: the bug
 *                      that showed agent b's text as agent a's).
 */
import fs from 'node:fs';
import path from 'node:path';
import { cli, rng, sessionDir, tempHome, writeFile } from './common.js';

export interface SearchScopeOptions {
  seed: number;
  agents: number;
  sessions: number;
  queries: number;
  keep: boolean;
}

const WORDS = ['zebra', 'revisit', 'vault', 'kiln', 'harbor', 'lantern', 'quarry', 'meadow', 'copper', 'violet', 'tundra', 'ember'];

export async function searchScope(o: SearchScopeOptions) {
  const r = rng(o.seed);
  const home = tempHome('search');
  const agents = Array.from({ length: o.agents }, (_, i) => `agent${i}`);
  const canary = new Map(agents.map((a) => [a, `canary${a}x${Math.floor(r.next() * 1e9).toString(36)}`]));
  for (const a of agents) writeFile(home, `agents/${a}/agent.yaml`, 'provider: scripted\nmodel: none\nsystem: chaos\n');
  // Each event's text, by session and event id: what its snippet must come from.
  const texts = new Map<string, string>();
  for (let n = 0; n < o.sessions; n++) {
    const agent = r.pick(agents);
    const id = `01a20000-0000-7000-8000-${String(n).padStart(12, '0')}`;
    const lines = [{ type: 'session.created', id: `sevt_c${n}`, created_at: '2026-01-01T00:00:00.000Z', format: 1, agent_id: agent, environment_id: 'local', title: `${agent} ${r.pick(WORDS)}` }];
    for (let m = 0; m < r.int(1, 6); m++) {
      const words = Array.from({ length: r.int(2, 12) }, () => r.pick(WORDS));
      const content = `${words.join(' ')} ${canary.get(agent)} line ${n}-${m}`;
      const eid = `sevt_m${n}x${m}`;
      texts.set(`${id}/${eid}`, content);
      lines.push({ type: 'user.message', id: eid, created_at: `2026-01-01T00:00:${String(m + 1).padStart(2, '0')}.000Z`, content } as never);
    }
    fs.mkdirSync(sessionDir(home, id), { recursive: true });
    fs.writeFileSync(path.join(sessionDir(home, id), 'events.jsonl'), lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
    fs.writeFileSync(path.join(sessionDir(home, id), 'wake-queue.jsonl'), '');
  }

  const inv = { cross_agent_hits: 0, foreign_text: 0, wrong_event_text: 0 };
  const evidence: unknown[] = [];
  let hits = 0;
  let searches = 0;
  for (let q = 0; q < o.queries; q++) {
    const scope = r.chance(0.8) ? r.pick(agents) : null;
    const words = Array.from({ length: r.int(1, 3) }, () => r.pick(WORDS));
    const res = await cli(home, ['search', ...words, ...(scope ? ['--agent', scope] : []), '--limit', '50', '--json']);
    if (res.code !== 0) throw new Error(`search failed (${res.code}): ${res.stderr}`);
    searches += 1;
    for (const h of (JSON.parse(res.stdout) as { hits: Array<{ session_id: string; event_id: string; agent_id: string; snippet: string; title: string | null }> }).hits) {
      hits += 1;
      const bad: string[] = [];
      if (scope !== null && h.agent_id !== scope) {
        inv.cross_agent_hits += 1;
        bad.push('agent');
      }
      if (scope !== null && [...canary].some(([a, c]) => a !== scope && `${h.snippet} ${h.title ?? ''}`.includes(c))) {
        inv.foreign_text += 1;
        bad.push('foreign');
      }
      // The snippet's words, marks and ellipses taken out, in order, are its own event's text.
      const own = texts.get(`${h.session_id}/${h.event_id}`) ?? '';
      const plain = h.snippet.replace(/\*\*/g, '').split('…').map((s) => s.trim()).filter(Boolean);
      if (!plain.every((part) => own.includes(part))) {
        inv.wrong_event_text += 1;
        bad.push('event');
      }
      if (bad.length && evidence.length < 5) evidence.push({ query: words, scope, hit: h, own, bad });
    }
  }
  if (!o.keep && Object.values(inv).every((v) => v === 0)) fs.rmSync(home, { recursive: true, force: true });
  return { part: 'search', searches, hits, invariants: inv, evidence, home };
}
