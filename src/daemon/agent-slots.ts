/**
 * `max_concurrent_runs` in agent.yaml, honoured across daemons (several
 * hosts on one home): a run of such an agent holds one of its N run slots,
 * `<home>/.openboa/agent-slots/<agent>/<k>/lock` for k < N, each a lease
 * like a session's (mkdir, refreshed, stale when its holder died). The live
 * slots are the agent's runs, counted on the file system, not per process.
 *
 * Slots, not a count: two daemons that counted the agent's live leases at
 * the same instant would both see room for one more and both start. Taking
 * slot k is one mkdir; of two daemons that try the same slot one gets
 * EEXIST and tries the next, so at most N runs hold slots, whatever the
 * timing. A daemon that found every slot held is told to try again soon
 * (RETRY_MS, jittered): a slot freed on another host sends no hint here.
 */
import fs from 'node:fs';
import path from 'node:path';
import { busy, OpenboaError } from '../core/foundation/errors.js';
import { acquireLease, type Lease } from '../core/foundation/lease.js';
import type { Home } from '../core/foundation/home.js';
import type { Runtime } from '../core/run/run-context.js';
import { loadAgent } from '../core/definitions/definitions.js';

/** How soon a session held back by a full agent is tried again, ms (plus up to as much jitter). */
export const RETRY_MS = 500;

export interface AgentSlotsOptions {
  home: Home;
  shared: boolean;
  staleMs: number;
  nowIso: () => string;
  random: () => number;
}

export class AgentSlots {
  constructor(private readonly o: AgentSlotsOptions) {}

  /**
   * One of the agent's `limit` slots, for the run `wakeId`; null when the
   * agent sets no limit. Throws `busy` (retryAfterMs set) when all are held.
   */
  async take(agentId: string, limit: number | undefined, runOf: string): Promise<Lease | null> {
    if (limit === undefined) return null;
    for (let k = 0; k < limit; k++) {
      // A folder per slot: proper-lockfile keeps one lock per guarded folder in a process.
      const dir = path.join(this.o.home.root, '.openboa', 'agent-slots', agentId, String(k));
      fs.mkdirSync(dir, { recursive: true });
      try {
        return await acquireLease(
          { dir, lease: path.join(dir, 'lock'), leaseOwner: path.join(dir, 'owner.json') },
          { purpose: 'agent-slot', wakeId: runOf, nowIso: this.o.nowIso(), staleMs: this.o.staleMs, shared: this.o.shared, what: `run slot ${k} of agent ${agentId}` },
        );
      } catch (e) {
        if (!OpenboaError.is(e) || e.code !== 'busy') throw e;
      }
    }
    const full = busy(`agent ${agentId} has its max_concurrent_runs (${limit}) runs going`);
    full.retryAfterMs = Math.round(RETRY_MS * (1 + this.o.random()));
    throw full;
  }
}

/** The session's agent and its max_concurrent_runs, for AgentSlots.take; no limit when either does not load (the run reports why). */
export function agentLimitOf(rt: Runtime, id: string): [string, number | undefined, string] {
  try {
    const agent = rt.store.snapshot(id, { persist: false }).agent_id;
    return [agent, loadAgent(rt.home, agent).def.max_concurrent_runs, id];
  } catch {
    return ['', undefined, id];
  }
}
