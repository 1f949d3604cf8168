/**
 * The daemon's side of cross-session search (docs/memory.md, "Search"): keeps
 * `<home>/.openboa/search.sqlite` current, so a line appended to any log is
 * searchable well under a second later.
 *
 * Why not the store's per-session subscription (SessionStore.subscribe):
 * each subscription holds its own two fs.watch handles and a sweep timer,
 * so 10,000 sessions would double the daemon's inotify watches (on top of
 * the session watcher's) and run 10,000 timers. The daemon already has one
 * change notification per session (SessionWatcher): the feed takes those
 * hints and reads through the store's cursor reads (SessionStore.readEvents
 * from the index's saved cursor), which is what subscribe() does inside.
 *
 * Contracts:
 * - hint(id): the session's log may have grown; it is indexed on the next
 *   turn of the event loop (hints coalesced).
 * - start(): opens the index (making it again when it is missing or not
 *   usable) and catches up every session in the background, yielding
 *   between sessions so runs are not held up.
 * - A sweep every `sweepMs` (the daemon's) retries the sessions left
 *   unfinished (a lock held too long by another writer), reads the
 *   learnings journals, and reopens the index if its file was deleted or
 *   replaced (the next search would otherwise rebuild one the daemon never
 *   feeds). Every FULL_SWEEP_EVERY-th sweep also stats every session's log
 *   against the index's cursor, for what no hint told (the daemon's own
 *   sweep hints what it finds, so that is a second net, not the first).
 * - Never blocks the event loop long: the index is opened with
 *   SHORT_BUSY_TIMEOUT_MS, the first SQLITE_BUSY (another process holding
 *   the write lock) ends the catch-up or flush at once (the sweep retries),
 *   a background catch-up yields after every chunk of a log (and gives
 *   way to runs that are starting: `nextTurn`), chunks are sized to cost
 *   about INDEX_BUDGET_MS, and the hinted sessions of one turn
 *   get about that much in all (the rest is hinted again for the next turn).
 * - Never throws: failures are notices; search is an aid, never a reason
 *   for the daemon to stop.
 */
import fs from 'node:fs';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import type { Runtime } from '../core/run/run-context.js';
import { SessionSearch } from '../core/search/session-search.js';
import { SHORT_BUSY_TIMEOUT_MS, searchDbFile } from '../core/search/search-db.js';
import { performance } from 'node:perf_hooks';
import { CHUNK_LINES, emptyReport, type CatchUpReport } from '../core/search/search-indexer.js';
import { FULL_SWEEP_EVERY } from './session-sweep.js';

export interface SearchFeedOptions {
  rt: Runtime;
  sweepMs: number;
  notice: (message: string, fields?: Record<string, unknown>) => void;
  /**
   * Awaited between two chunks of a background catch-up: by default the next
   * turn of the event loop; the daemon's waits while a run is starting
   * (BackgroundGate.turn).
   */
  nextTurn?: () => Promise<void>;
}

/** Learnings journals are read at most this often on hints, ms (the learn tool writes them during runs). */
const LEARNINGS_EVERY_MS = 1000;
/**
 * How long indexing may hold the daemon's thread at a time, ms: a background
 * catch-up's chunk, or a turn's flush of hinted sessions. Runs wait behind
 * it (an append to a small session next to a 100,000-event one once waited
 * 50-90 ms per 1,000-line chunk). The lines per chunk follow what the last
 * chunk cost (ChunkPacer).
 */
export const INDEX_BUDGET_MS = 4;

/**
 * Lines per chunk so a chunk costs about INDEX_BUDGET_MS: from the last
 * chunk's lines and time, halved at once when over, grown by at most a
 * quarter when under, between 8 and CHUNK_LINES. Time is measured with
 * performance.now(): a measure of work done, not a timer (the injected clock
 * does not move in tests, where chunks then stay at their largest).
 */
export class ChunkPacer {
  lines = 64;
  took(lines: number, ms: number): void {
    if (lines < this.lines) return; // a short chunk (the log's end) says nothing of the cost
    const next = ms > INDEX_BUDGET_MS ? Math.min(this.lines / 2, (this.lines * INDEX_BUDGET_MS) / ms) : Math.min(this.lines * 1.25, ms > 0 ? (this.lines * INDEX_BUDGET_MS) / ms : Infinity);
    this.lines = Math.max(8, Math.min(CHUNK_LINES, Math.floor(next)));
  }
}

export class SearchFeed {
  private search: SessionSearch | null = null;
  private ino = 0;
  private readonly pending = new Set<string>();
  private flushArmed = false;
  private stopped = false;
  private cancelSweep: (() => void) | null = null;
  private sweeping = false;
  private sweeps = 0;
  /** Sessions whose indexing was left unfinished (the lock was busy): the next sweep goes on with them. */
  private readonly unfinished = new Set<string>();
  private learningsAt = 0;
  private readonly file: string;
  /** Problems already reported, so a sweep does not repeat them every time. */
  private readonly reported = new Set<string>();

  constructor(private readonly o: SearchFeedOptions) {
    this.file = searchDbFile(o.rt.home);
  }

  /** Opens the index and catches up in the background; resolves once that catch-up is done. */
  async start(): Promise<void> {
    if (!this.open()) return;
    await this.catchUpAll('start');
    this.arm();
  }

  private open(): boolean {
    this.search?.close();
    this.search = null;
    try {
      this.search = SessionSearch.open(this.o.rt.store, this.o.rt.deps.env, this.file, { busyMs: SHORT_BUSY_TIMEOUT_MS });
      this.ino = fs.statSync(this.file).ino;
      return true;
    } catch (e) {
      this.o.notice(`search index unavailable (${(e as Error).message}); search_sessions and openboa search catch up on their own`, { event: 'search_index_error' });
      return false;
    }
  }

  /** The index file was deleted or replaced under us: open the one that is there now (or make it). */
  private reopenIfMoved(): void {
    let ino = 0;
    try {
      ino = fs.statSync(this.file).ino;
    } catch {
      // gone
    }
    if (ino === this.ino || this.stopped) return;
    // A new, empty index: everything is read again in the background (hinted sessions at once).
    if (this.open()) setImmediate(() => void this.catchUpAll('start'));
  }

  hint(sessionId: string): void {
    if (this.stopped) return;
    this.pending.add(sessionId);
    if (this.flushArmed) return;
    this.flushArmed = true;
    setImmediate(() => this.flush());
  }

  private flush(): void {
    this.flushArmed = false;
    const ids = [...this.pending];
    this.pending.clear();
    if (this.stopped || !this.search) return;
    this.reopenIfMoved();
    const s = this.search;
    if (!s) return;
    const report = emptyReport();
    const t0 = performance.now();
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i]!;
      // Past the budget, the rest waits for the next turn (a hint of one line costs far less than a chunk).
      if (performance.now() - t0 > INDEX_BUDGET_MS) {
        for (const rest of ids.slice(i)) this.hint(rest);
        break;
      }
      const how = this.paced(s, id, report, () => performance.now() - t0 > INDEX_BUDGET_MS);
      if (how === 'stopped') this.hint(id);
      if (how === 'busy') {
        for (const rest of ids.slice(i)) this.unfinished.add(rest); // the next sweep goes on with them
        break;
      }
    }
    const now = this.o.rt.deps.clock.now();
    if (!report.busy && now - this.learningsAt >= LEARNINGS_EVERY_MS) {
      this.learningsAt = now;
      for (const a of s.indexer.learningAgents()) s.indexer.catchUpLearnings(a, report);
    }
    this.tell(report);
  }

  /**
   * Catches the index up: `start` and `full`, every session whose log moved
   * (one stat each) and the sessions that are gone; `unfinished`, only those
   * left unfinished before. Then the learnings journals.
   */
  private async catchUpAll(why: 'start' | 'full' | 'unfinished'): Promise<void> {
    if (this.sweeping || this.stopped) return;
    this.sweeping = true;
    const started = this.o.rt.deps.clock.now();
    const report = emptyReport();
    try {
      this.reopenIfMoved();
      let s = this.search;
      if (!s) return;
      const { stale, gone } = why === 'unfinished' ? { stale: [...this.unfinished], gone: [] } : s.indexer.staleSessions();
      this.unfinished.clear();
      for (const id of gone) {
        s.indexer.forgetSession(id);
        report.removed += 1;
      }
      for (let k = 0; k < stale.length; k++) {
        const id = stale[k] as string;
        // One chunk of about INDEX_BUDGET_MS per turn of the event loop: a log of 100,000 lines never holds up the runs.
        for (;;) {
          if (this.stopped || this.search !== s) return;
          const how = this.paced(s, id, report, () => true);
          if (how === 'busy') {
            // Another writer holds the lock: the next sweep goes on from here.
            for (const rest of stale.slice(k)) this.unfinished.add(rest);
            return;
          }
          await (this.o.nextTurn ?? yieldToLoop)();
          if (how === 'done') break;
        }
        s = this.search;
        if (!s) return;
      }
      for (const a of s.indexer.learningAgents()) {
        s.indexer.catchUpLearnings(a, report);
        if (report.busy) return;
      }
      if (why === 'start' && report.sources > 0) {
        const ms = this.o.rt.deps.clock.now() - started;
        this.o.notice(`search index: ${report.rows} row(s) from ${report.sources} log(s) indexed in ${(ms / 1000).toFixed(1)} s`, { event: 'search_index_caught_up', rows: report.rows, sources: report.sources, ms });
      }
    } catch (e) {
      this.o.notice(`search index catch-up failed: ${(e as Error).message}`, { event: 'search_index_error' });
    } finally {
      this.sweeping = false;
      this.tell(report);
    }
  }

  private readonly pacer = new ChunkPacer();

  /** catchUpSession in chunks the pacer sizes, each chunk's cost fed back to it. */
  private paced(s: SessionSearch, id: string, report: CatchUpReport, stop: () => boolean) {
    let t = performance.now();
    let lines = this.pacer.lines;
    return s.indexer.catchUpSession(
      id,
      report,
      () => {
        const now = performance.now();
        this.pacer.took(lines, now - t);
        t = now;
        lines = this.pacer.lines;
        return stop();
      },
      lines,
    );
  }

  /** Reports each new problem once (a log of a newer format, a lock held too long). */
  private tell(report: CatchUpReport) {
    for (const p of report.problems) {
      const key = `${p.source}\u0000${p.message}`;
      if (this.reported.has(key)) continue;
      if (this.reported.size > 1000) this.reported.clear();
      this.reported.add(key);
      this.o.notice(`search index: ${p.source} not indexed: ${p.message}`, { event: 'search_index_skipped' });
    }
  }

  private arm() {
    if (this.stopped || !Number.isFinite(this.o.sweepMs)) return;
    this.cancelSweep = this.o.rt.deps.clock.setTimer(this.o.sweepMs, () => {
      this.cancelSweep = null;
      this.sweeps += 1;
      void this.catchUpAll(this.sweeps % FULL_SWEEP_EVERY === 0 ? 'full' : 'unfinished').then(() => this.arm());
    });
  }

  stop(): void {
    this.stopped = true;
    this.cancelSweep?.();
    this.cancelSweep = null;
    this.search?.close();
    this.search = null;
  }
}
