/**
 * What spawn_session's checks cost before each child (src/core/delegation/spawn-limits.ts):
 * the walk up to the root for interrupts, then the census of the whole tree
 * for limits.max_tree_sessions and max_spawns_per_minute, one snapshot per
 * session. Trees of 50 (the default limit), 500 and 2000 (the most the limit
 * allows) sessions, four levels deep below one root, every session idle;
 * the check is made from a leaf, with limits high enough that the walk reads
 * the whole tree. `warm`: the store has read the tree before (a daemon's
 * fold cache); `cold`: a new store, each session.json read from disk.
 * Target: at the default limit, under 5 ms warm.
 */
import { SessionStore } from '../src/core/store/session-store.js';
import { systemDeps } from '../src/core/foundation/deps.js';
import { createSession } from '../src/core/ops/create-session.js';
import { sendMessage } from '../src/core/ops/session-ops.js';
import { spawnRefusal } from '../src/core/delegation/spawn-limits.js';
import { iso } from '../src/core/foundation/clock.js';
import { benchHome, type BenchHome } from './fixtures.js';
import { median, round, timeSync } from './stats.js';

/** A tree of `n` sessions: each session's children are known to it by a report (an ingress line, as after a child's run). */
function tree(b: BenchHome, n: number): { root: string; leaf: string } {
  const root = createSession(b.store, { agent: 'fast' }).id;
  const ids = [root];
  for (let i = 1; i < n; i++) {
    const parent = ids[Math.floor((i - 1) / 8)] as string; // 8 children a session: 2000 sessions are 4 levels deep
    const id = createSession(b.store, { agent: 'fast', parentSessionId: parent }).id;
    sendMessage(b.store, id, 'a part');
    b.store.appendUserEvent(parent, { type: 'session.thread_status_idle', session_thread_id: id, agent_name: 'fast', stop_reason: { type: 'end_turn' }, delivery_key: `run:wrun_${i.toString().padStart(8, '0')}` });
    ids.push(id);
  }
  return { root, leaf: ids.at(-1) as string };
}

export function benchSpawnCheck(sizes = [50, 500, 2000]) {
  const rows = [];
  for (const n of sizes) {
    const b = benchHome();
    try {
      const { leaf } = tree(b, n);
      const bounds = { maxDepth: 64, maxTreeSessions: 1_000_000, maxSpawnsPerMinute: 1_000_000 };
      const check = (store: SessionStore) => spawnRefusal(store, store.snapshot(leaf, { persist: false }), bounds, { runOpenedAt: iso(Date.now() - 1000), nowMs: Date.now(), maxChildren: 1_000_000 });
      const warm = timeSync(() => check(b.store), 20);
      const cold = timeSync(() => check(new SessionStore(b.home, systemDeps())), 5, 1);
      rows.push({ sessions: n, warm_ms: { p50: round(median(warm), 2), max: round(Math.max(...warm), 2) }, cold_ms: { p50: round(median(cold), 1) } });
    } finally {
      b.cleanup();
    }
  }
  return { bench: 'spawn-check', trees: rows, target: 'at the default limit (50 sessions): under 5 ms warm' };
}
