/**
 * The daemon (SPEC §1): the long-running worker that owns a home's sessions.
 *
 * - Discovery: at start, every session is folded (from session.json's
 *   cursors) and judged, those with work first (work-index.ts); work found
 *   is queued at once, while the scan goes on.
 * - Watch: a hint (fs.watch on each session folder; chokidar only when
 *   polling) that a session changed; the files decide. A sweep (default
 *   every 30 s) re-stats the sessions hinted since the last one, and every
 *   tenth (5 minutes) every session, for what a watcher missed
 *   (session-sweep.ts).
 * - Schedule: one timer for the earliest due revisit or retry across all
 *   sessions (DueScheduler).
 * - Execute: p-queue with `concurrency`; one run per session at a time in
 *   this process (single flight), and the session lease across processes.
 *   Work that arrives during a run is picked up right after it.
 * - Interrupt: a user.interrupt for a session running here aborts the run
 *   (model call and shell) at once.
 * - Stop: no new work, in-flight runs aborted as `shutdown` (they record
 *   session.status_rescheduled and release their leases), then resolve.
 *
 * Every decision reads the journals; nothing lives only in this process's
 * memory, so a kill -9 loses nothing the next start cannot rebuild.
 */
import fs from 'node:fs';
import { performance } from 'node:perf_hooks';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import PQueue from 'p-queue';
import { iso } from '../core/foundation/clock.js';
import { OpenboaError } from '../core/foundation/errors.js';
import { LEASE_STALE_MS } from '../core/foundation/lease.js';

/** How long the start scan holds the thread at a time, ms, before it gives way to runs found meanwhile and to hints. */
const SCAN_SLICE_MS = 8;
import { planRun, nextDueMs } from '../core/run/plan.js';
import type { Runtime } from '../core/run/run-context.js';
import type { AbortReason } from '../core/run/run-control.js';
import type { WakeResult } from '../core/run/wake-api.js';
import type { SessionSnapshot } from '../core/schema/index.js';
import { DueScheduler } from './due-scheduler.js';
import { SessionWatcher } from './session-watcher.js';
import { DefinitionWatcher } from './definition-watcher.js';
import { reapOrphanSandboxes } from './reap.js';
import { recordActivation } from './activations.js';
import { repairReport, runRecorded, recordSpin, type DaemonRunDeps } from './daemon-run.js';
import { operatorLog, type OperatorLog } from './operator-log.js';
import { SessionHolds } from './session-holds.js';
import { TailSealer } from './tail-sealer.js';
import { SessionSweep } from './session-sweep.js';
import { WorkIndex, discoveryOrder } from './work-index.js';
import { SearchFeed } from './search-feed.js';
import { WebhookDispatcher } from './webhook-dispatcher.js';
import { RunPacing, queuePriority } from './run-pacing.js';
import { BackgroundGate } from './background-gate.js';
import { watchHome } from './home-watches.js';
import { owns } from './shard.js';
import type { StrayPickup } from './stray-pickup.js';
import type { LeaseWatch } from './lease-watch.js';
import { AgentSlots, agentLimitOf } from './agent-slots.js';
import type { DaemonOptions } from './daemon-options.js';

export type { DaemonOptions } from './daemon-options.js';

interface Running {
  controller: AbortController;
  /** Something changed during the run; it is looked at again right after. */
  dirty: boolean;
}

export class Daemon {
  private readonly queue: PQueue;
  private readonly queued = new Set<string>();
  /** Queued sessions with children's reports to take in: their runs are urgent (run-pacing.ts). */
  private readonly queuedReports = new Set<string>();
  private readonly pacing = new RunPacing();
  /** Background work (the start scan, the search catch-up) gives way to runs that are starting (background-gate.ts). */
  private readonly gate: BackgroundGate;
  private readonly running = new Map<string, Running>();
  /** Unfinished last lines: given a grace, then sealed. */
  private readonly tails: TailSealer;
  private readonly scheduler: DueScheduler;
  private readonly watcher: SessionWatcher;
  private readonly definitions: DefinitionWatcher;
  /** What holds sessions back from running now: busy leases, spins, broken definitions, stuck inboxes. */
  private readonly holds: SessionHolds;
  /** The safety sweep, and the journal sizes it compares against. */
  private readonly sweeper: SessionSweep;
  private readonly index: WorkIndex;
  /** Keeps the cross-session search index current from the watcher's hints (search-feed.ts). */
  private readonly search: SearchFeed;
  private readonly webhooks: WebhookDispatcher;
  private readonly log: OperatorLog;
  /** What a run of a session uses of the daemon (daemon-run.ts). */
  private readonly runDeps: DaemonRunDeps;
  private stopping = false;
  private readonly leaseStaleMs: number;
  private readonly owns: (id: string) => boolean;
  private readonly strays: StrayPickup | null;
  private readonly leases: LeaseWatch;
  private readonly slots: AgentSlots;
  /** Whether this daemon keeps the home's own state: the search index and the webhook deliveries. */
  private readonly keepsHomeState: boolean;
  /** Runs executed since start (for tests and benchmarks). */
  runsCompleted = 0;
  /** The latest results, executed or skipped, each reported once its session is settled again. */
  readonly results: WakeResult[] = [];
  private resultListeners: Array<(r: WakeResult) => void> = [];

  constructor(
    private readonly rt: Runtime,
    o: DaemonOptions,
  ) {
    if (!Number.isInteger(o.concurrency) || o.concurrency < 1) throw new OpenboaError('invalid_input', `concurrency: expected a whole number >= 1, got ${o.concurrency}`);
    this.queue = new PQueue({ concurrency: o.concurrency });
    this.leaseStaleMs = o.leaseStaleMs ?? LEASE_STALE_MS;
    const shard = o.shard ?? null;
    this.owns = (id) => owns(shard, id);
    this.slots = new AgentSlots({ home: rt.home, shared: rt.store.shared, staleMs: this.leaseStaleMs, nowIso: () => iso(rt.deps.clock.now()), random: rt.deps.random });
    this.log = operatorLog(o.write, o.json, () => rt.deps.clock.now(), o.columns);
    this.tails = new TailSealer({ clock: rt.deps.clock, paths: (id) => rt.store.paths(id), notice: (m, f) => this.log.notice(m, f), onGraceEnd: (id) => this.evaluate(id) });
    this.holds = new SessionHolds({ clock: rt.deps.clock, random: rt.deps.random, sweepMs: o.sweepMs, store: rt.store });
    this.index = new WorkIndex(rt.home, rt.deps.clock);
    this.gate = new BackgroundGate(rt.deps.clock);
    this.search = new SearchFeed({ rt, sweepMs: o.sweepMs, notice: (m, f) => this.log.notice(m, f), nextTurn: this.gate.turn });
    this.webhooks = new WebhookDispatcher({ rt, sweepMs: o.sweepMs, notice: (m, f) => this.log.notice(m, f) });
    // On a shared home one daemon (shard 0) keeps them: SQLite's WAL does not work across hosts, and webhooks
    // delivered by every host would go out once per host, their journal appended from several.
    this.keepsHomeState = !rt.store.shared || (o.shard?.index ?? 0) === 0;
    this.scheduler = new DueScheduler(rt.deps.clock, (ids) => ids.forEach((id) => this.evaluate(id)));
    ({ sweeper: this.sweeper, watcher: this.watcher, definitions: this.definitions, strays: this.strays, leases: this.leases } = watchHome(rt, o, this.leaseStaleMs, {
      holds: this.holds,
      gate: this.gate,
      log: this.log,
      owns: this.owns,
      evaluate: (id) => this.evaluate(id),
      forget: (id) => this.forget(id),
      hinted: (id) => {
        this.search.hint(id);
        this.webhooks.hint(id);
      },
      swept: (id) => this.search.hint(id),
      watcherReady: () => this.startSweepOnce('watcher'),
      definitionsChanged: () => this.definitionsChanged(),
      busy: (id) => this.queued.has(id) || this.running.has(id),
      adopt: (id, snap) => this.request(id, snap),
    }));
    this.runDeps = { rt, log: this.log, holds: this.holds, pacing: this.pacing, leaseStaleMs: this.leaseStaleMs, leases: this.leases, forget: (id) => this.forget(id) };
  }

  /** A definition changed: retry at once the sessions a broken definition held back. */
  private definitionsChanged() {
    if (this.stopping) return;
    for (const id of this.holds.releaseDefinitions()) {
      this.scheduler.set(id, null);
      this.request(id);
    }
  }

  get watchMode() {
    return this.watcher.mode;
  }

  /**
   * Starts watching, then scans every session; resolves when the scan is
   * done (runs go on). The watcher comes first, so an append during a long
   * scan is a hint at once; one sweep after both catches what changed before
   * a watch was in place. A session with work waits for nothing else: the
   * scan and the watches go in slices of a few ms that give way to starting
   * runs, and the search index is caught up only after the scan.
   */
  async start(): Promise<{ sessions: number }> {
    fs.mkdirSync(this.rt.home.sessionsDir, { recursive: true });
    const removed = this.rt.store.removeAbandonedCreations(10 * 60_000);
    if (removed) this.log.notice(`removed ${removed} half-made session folder(s) left by a crash`);
    const reaped = reapOrphanSandboxes(this.rt.home.sessionsDir);
    if (reaped) this.log.notice(`stopped ${reaped} sandbox(es) a killed daemon left running`, { event: 'reaped_sandboxes', count: reaped });
    if (!this.stopping) {
      this.watcher.start();
      this.definitions.start();
    }
    // Sessions with work first (the index, then newest-modified): their runs begin while discovery goes on.
    const ids = discoveryOrder(this.rt.home.sessionsDir, this.rt.store.listIds().filter(this.owns), this.index.load());
    let slice = performance.now();
    for (let i = 0; i < ids.length; i++) {
      if (this.stopping) break;
      const queued = await this.evaluateAsync(ids[i] as string);
      if (queued || performance.now() - slice > SCAN_SLICE_MS) {
        await this.gate.turn(); // a run queued now begins before the scan goes on
        slice = performance.now();
      }
    }
    this.index.write();
    // In the background: the index is an aid, never a reason to hold up discovery or runs.
    if (!this.stopping && this.keepsHomeState) {
      void this.search.start();
      void this.webhooks.start();
    }
    this.startSweepOnce('scan');
    this.sweeper.start();
    this.strays?.start();
    return { sessions: ids.length };
  }

  private readonly startDone = new Set<'scan' | 'watcher'>();

  /** The one sweep of the start, once both the scan and the watcher's setup are done. */
  private startSweepOnce(part: 'scan' | 'watcher') {
    this.startDone.add(part);
    if (this.startDone.size === 2) this.sweep();
  }

  /** Calls `fn` with every finished run's result (tests, benchmarks). */
  onResult(fn: (r: WakeResult) => void): () => void {
    this.resultListeners.push(fn);
    return () => {
      this.resultListeners = this.resultListeners.filter((f) => f !== fn);
    };
  }

  /**
   * evaluate(), folding a long unfolded log in slices (store.snapshotAsync)
   * so the start scan never holds the thread for one big session.
   */
  private async evaluateAsync(id: string): Promise<boolean> {
    if (this.stopping || this.running.has(id)) return this.evaluate(id);
    let snap: SessionSnapshot;
    try {
      snap = await this.rt.store.snapshotAsync(id, { pin: this.pinsOutsideLease });
    } catch (e) {
      return this.unreadable(id, e);
    }
    return this.evaluate(id, snap);
  }

  /** A look pins hand-written delays, except on a shared home: its queue is written only under the lease (wake.ts pins). */
  private get pinsOutsideLease(): boolean {
    return !this.rt.store.shared;
  }

  private unreadable(id: string, e: unknown): false {
    if (OpenboaError.is(e) && e.code === 'not_found') this.forget(id);
    else this.log.notice(`cannot read session ${id}: ${(e as Error).message}`, { session_id: id });
    return false;
  }

  /** Looks at a session again: queue it, interrupt it, or arm its due time. Returns whether it was queued. */
  evaluate(id: string, folded?: SessionSnapshot): boolean {
    if (this.stopping) return false;
    const run = this.running.get(id);
    // Another daemon's share: looked at only when stray (stray-pickup.ts), or while it runs here.
    if (!run && !this.owns(id)) return false;
    let snap: SessionSnapshot;
    try {
      // While a run holds the session, only read: the run writes session.json itself.
      snap = folded && !run ? folded : this.rt.store.snapshot(id, run ? { persist: false } : { pin: this.pinsOutsideLease });
    } catch (e) {
      return this.unreadable(id, e);
    }
    this.sweeper.note(id, snap);
    this.holds.observe(id, snap);
    if (snap.held_back.events || snap.held_back.wake_queue) this.tails.arm(id, snap);
    if (run) {
      run.dirty = true;
      if (snap.pending_events.some((p) => p.type === 'user.interrupt') && !run.controller.signal.aborted) {
        run.controller.abort({ kind: 'interrupt' } satisfies AbortReason);
      }
      return false;
    }
    const now = this.rt.deps.clock.now();
    const heldUntil = this.holds.heldUntil(id, now);
    if (heldUntil !== undefined) {
      this.scheduler.set(id, heldUntil);
      return false;
    }
    // A child idle after a run its parent has no report of (a crash came between): deliver it now.
    if (snap.parent_session_id && snap.status === 'idle') repairReport(this.runDeps, id, snap);
    const plan = planRun(snap, now, { retryNow: this.holds.retriesNow(id) });
    if (plan.runnable || snap.rejected.length > 0 || this.holds.inboxWork(id)) {
      this.scheduler.set(id, null);
      this.index.note(id, 0);
      return this.request(id, snap);
    }
    const due = nextDueMs(snap);
    this.scheduler.set(id, due);
    this.index.note(id, due);
    return false;
  }

  /**
   * Queues a run. Waiting sessions go first in order of how long they have
   * waited (the seconds since their log last changed): after a crash loop, or
   * with more work than concurrency, the ones left behind are not starved by
   * whichever sort first in the scan.
   */
  private request(id: string, snap?: SessionSnapshot): boolean {
    if (this.queued.has(id) || this.running.has(id)) return false;
    this.queued.add(id);
    const { priority, reports } = queuePriority(snap, this.rt.deps.clock.now());
    if (reports) this.queuedReports.add(id);
    void this.queue.add(() => this.runSession(id), { priority });
    return true;
  }

  private async runSession(id: string): Promise<void> {
    // From its slot to its opening, background work gives way (background-gate.ts).
    const opening = this.gate.hold();
    // Every other run begins on a turn of the event loop of its own: runs that end at once, again and again (a
    // session that fails before it writes anything), can never keep timers, watchers and I/O from running. An
    // urgent run (run-pacing.ts) goes on at once; it takes reports in, so it cannot repeat without the spin guard.
    // The session stays `queued` until it is `running`: a request meanwhile must not queue it a second time.
    if (!this.queuedReports.has(id)) await yieldToLoop();
    this.queued.delete(id);
    const urgent = this.queuedReports.delete(id);
    if (this.stopping) return opening();
    const entry: Running = { controller: new AbortController(), dirty: false };
    this.running.set(id, entry);
    const runtimeDir = this.rt.store.paths(id).runtime;
    let skipped = false;
    let threw = false;
    let result: WakeResult | null = null;
    const begun = this.holds.begin(id);
    try {
      ({ result, skipped, threw } = await runRecorded(this.runDeps, id, { signal: entry.controller.signal, retryNow: begun.retryNow, urgent, opening, slot: () => this.slots.take(...agentLimitOf(this.rt, id)) }));
      if (result && !skipped) this.runsCompleted += 1;
    } finally {
      opening();
      this.pacing.end(id);
      this.running.delete(id);
      this.holds.end(id, begun, result, threw);
      // After a run, look again (work may have arrived). After a skip, only
      // arm the due time: re-queueing at once could spin if the daemon's view
      // and the run's ever disagreed; any new append is a fresh hint anyway.
      if (!this.stopping) {
        // A child's run that ended reported to its parent: queue the parent now, before this run's slot is handed
        // on, so it takes the slot ahead of waiting siblings instead of after its log's watcher hint arrives.
        if (result?.outcome === 'executed' && result.parent_session_id) this.evaluate(result.parent_session_id);
        if (skipped && !entry.dirty) this.armDue(id);
        else {
          recordSpin(this.runDeps, id, runtimeDir);
          if (this.evaluate(id)) recordActivation(runtimeDir, { kind: 'requeued', at: iso(this.rt.deps.clock.now()), reason: 'more work arrived during the run' });
        }
      }
      if (result) {
        this.results.push(result);
        if (this.results.length > 1000) this.results.splice(0, this.results.length - 1000);
        for (const f of this.resultListeners) f(result);
      }
    }
  }

  private armDue(id: string) {
    try {
      this.scheduler.set(id, nextDueMs(this.rt.store.snapshot(id)));
    } catch {
      this.forget(id);
    }
  }

  private forget(id: string) {
    this.index.note(id, null);
    this.sweeper.forget(id);
    this.holds.forget(id);
    this.leases.forget(id);
    this.scheduler.set(id, null);
  }

  /** Re-stats every session against what was folded; looks again at any that moved, and at new ones. */
  sweep(): void {
    if (this.stopping) return;
    this.sweeper.run(true);
  }

  get activeRuns(): number {
    return this.running.size;
  }

  /** Resolves when nothing is queued or running. */
  async idle(): Promise<void> {
    await this.queue.onIdle();
  }

  /**
   * Graceful stop: take no new work, abort in-flight runs as `shutdown` (each
   * records session.status_rescheduled so the next start resumes it), wait for
   * them to release their leases, up to `graceMs`.
   */
  async stop(graceMs = 4500): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    this.sweeper.stop();
    this.strays?.stop();
    this.leases.stop();
    this.search.stop();
    this.webhooks.stop();
    this.tails.stop();
    this.scheduler.stop();
    this.queue.clear();
    this.queued.clear();
    this.queuedReports.clear();
    for (const r of this.running.values()) r.controller.abort({ kind: 'shutdown' } satisfies AbortReason);
    // The grace runs on the injected clock, like every timer of the daemon.
    let cancel: (() => void) | undefined;
    await Promise.race([this.queue.onIdle(), new Promise<void>((res) => (cancel = this.rt.deps.clock.setTimer(graceMs, res)))]);
    cancel?.();
    this.index.write();
    await this.watcher.close();
    await this.definitions.close();
  }
}
