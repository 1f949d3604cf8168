/**
 * What tells the daemon that a session may have work (docs/daemon.md,
 * "Watch"): the session watcher (a hint per change of a session's folder),
 * the safety sweep (what a watcher missed: the sessions hinted since the
 * last sweep, and every tenth period all of them), the watch of agents/
 * and environments/ (a fixed definition releases the sessions it held) and
 * the watch of leases other processes hold (one released frees the session
 * it held back). The files decide; a hint only says where to look.
 */
import type { Runtime } from '../core/run/run-context.js';
import type { BackgroundGate } from './background-gate.js';
import type { DaemonOptions } from './daemon-options.js';
import { DefinitionWatcher } from './definition-watcher.js';
import type { OperatorLog } from './operator-log.js';
import type { SessionHolds } from './session-holds.js';
import { SessionSweep } from './session-sweep.js';
import { SessionWatcher } from './session-watcher.js';
import { StrayPickup } from './stray-pickup.js';
import { LeaseWatch } from './lease-watch.js';
import type { SessionSnapshot } from '../core/schema/index.js';

/** What the daemon does with what its watches see. */
export interface WatchHandlers {
  holds: SessionHolds;
  gate: BackgroundGate;
  log: OperatorLog;
  /** The sessions this daemon watches and sweeps (shard.ts: all without --shard). */
  owns: (id: string) => boolean;
  /** Looks at a session again (daemon.ts evaluate). */
  evaluate: (id: string) => void;
  /** The session is gone. */
  forget: (id: string) => void;
  /** A watcher's hint, after evaluate: the background feeds (search, webhooks) look too. */
  hinted: (id: string) => void;
  /** What the sweep found changed, after evaluate: a watcher missed it, so the search index did too. */
  swept: (id: string) => void;
  /** The session watcher is in place (the first sweep waits for it and for the start scan). */
  watcherReady: () => void;
  definitionsChanged: () => void;
  /** Whether a session is queued or running here (the stray pickup leaves it alone). */
  busy: (id: string) => boolean;
  /** Another shard's session whose work waited unrun (stray-pickup.ts): queue it here. */
  adopt: (id: string, snap: SessionSnapshot) => void;
}

export interface HomeWatches {
  sweeper: SessionSweep;
  watcher: SessionWatcher;
  definitions: DefinitionWatcher;
  /** With --shard and more than one shard: the others' work that waits unrun, taken here (stray-pickup.ts). */
  strays: StrayPickup | null;
  /** Sessions held back by another process's lease, looked at again as soon as it is gone. */
  leases: LeaseWatch;
}

export function watchHome(rt: Runtime, o: DaemonOptions, leaseStaleMs: number, h: WatchHandlers): HomeWatches {
  const sweeper = new SessionSweep({
    clock: rt.deps.clock,
    periodMs: o.sweepMs,
    store: { listIds: () => rt.store.listIds().filter(h.owns) },
    sessionsDir: rt.home.sessionsDir,
    inboxWork: (id) => h.holds.inboxWork(id),
    inboxStuck: (id) => h.holds.inboxStuck(id),
    stuckInboxes: () => h.holds.stuckInboxIds(),
    onStale: (id) => {
      h.evaluate(id);
      h.swept(id);
    },
  });
  const watcher: SessionWatcher = new SessionWatcher({
    sessionsDir: rt.home.sessionsDir,
    clock: rt.deps.clock,
    poll: o.poll,
    ...(o.pollIntervalMs ? { pollIntervalMs: o.pollIntervalMs } : {}),
    owns: h.owns,
    onHint: (id) => {
      sweeper.hinted(id);
      h.evaluate(id);
      h.hinted(id);
    },
    onGone: (id) => h.forget(id),
    onWarn: (m) => h.log.notice(m),
    // A hint may start a run: background work gives way until it has been looked at.
    holdWhilePending: () => h.gate.hold(),
    nextTurn: h.gate.turn,
    onReady: () => {
      // `watches`: one for sessions/, one per session folder, one per inbox/ (0 when polling).
      h.log.notice(`watching ${rt.home.sessionsDir} (${watcher.mode})`, { event: 'watcher_ready', watches: watcher.watches });
      h.watcherReady();
    },
  });
  const definitions = new DefinitionWatcher({
    agentsDir: rt.home.agentsDir,
    environmentsDir: rt.home.environmentsDir,
    poll: o.poll,
    ...(o.pollIntervalMs ? { pollIntervalMs: o.pollIntervalMs } : {}),
    onChange: () => h.definitionsChanged(),
    onWarn: (m) => h.log.notice(m),
    onReady: () => h.log.notice('watching agents/ and environments/ for fixes to definitions', { event: 'definitions_watcher_ready' }),
  });
  const strayMs = o.strayMs ?? leaseStaleMs / 4;
  const strays =
    o.shard && o.shard.count > 1
      ? new StrayPickup({ clock: rt.deps.clock, periodMs: strayMs, leaseStaleMs, store: rt.store, sessionsDir: rt.home.sessionsDir, owns: h.owns, busy: h.busy, adopt: (id, snap) => {
          h.log.notice(`taking session ${id} from another shard: its work has waited unrun for ${strayMs / 1000} s`, { event: 'stray_adopted', session_id: id });
          h.adopt(id, snap);
        } })
      : null;
  const leases = new LeaseWatch({
    clock: rt.deps.clock,
    leasePath: (id) => rt.store.paths(id).lease,
    onFree: (id) => {
      h.holds.releaseHold(id);
      h.evaluate(id);
    },
  });
  return { sweeper, watcher, definitions, strays, leases };
}
