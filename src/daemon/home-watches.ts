/**
 * What tells the daemon that a session may have work (docs/daemon.md,
 * "Watch"): the session watcher (a hint per change of a session's folder),
 * the safety sweep (what a watcher missed: the sessions hinted since the
 * last sweep, and every tenth period all of them) and the watch of agents/
 * and environments/ (a fixed definition releases the sessions it held). The
 * files decide; a hint only says where to look.
 */
import type { Runtime } from '../core/run/run-context.js';
import type { BackgroundGate } from './background-gate.js';
import type { DaemonOptions } from './daemon-options.js';
import { DefinitionWatcher } from './definition-watcher.js';
import type { OperatorLog } from './operator-log.js';
import type { SessionHolds } from './session-holds.js';
import { SessionSweep } from './session-sweep.js';
import { SessionWatcher } from './session-watcher.js';

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
}

export interface HomeWatches {
  sweeper: SessionSweep;
  watcher: SessionWatcher;
  definitions: DefinitionWatcher;
}

export function watchHome(rt: Runtime, o: DaemonOptions, h: WatchHandlers): HomeWatches {
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
      h.log.notice(`watching ${rt.home.sessionsDir} (${watcher.mode})`, { event: 'watcher_ready' });
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
  return { sweeper, watcher, definitions };
}
