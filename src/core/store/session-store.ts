/**
 * The session store: sessions as directories under `<home>/sessions`, and
 * the one door to their files for every caller (CLI, daemon, a server, an
 * indexer): create · listIds · append (appendEvents, appendUserEvent,
 * scheduleWake, settleWakes) · read from a cursor (readEvents) · follow new
 * lines (follow, subscribe) · snapshot.
 *
 * Contracts:
 * - create() makes the whole directory under a hidden temp name and renames it
 *   into place, so a crash never leaves half a session visible.
 * - Every append is one write (jsonl.appendLines). Runtime-written events are
 *   validated against the schema and redacted before they are written.
 * - Every read and write goes through the log's format (logFormat): lines are
 *   brought up to the current one; a newer format is refused, not misread.
 * - snapshot() continues the fold from session.json's cursors; a missing,
 *   unreadable or outdated session.json is rebuilt from the journals.
 * - Which appends are synced (fsync) is the store's durability policy
 *   (durability.ts; docs/format.md, Durability).
 */
import fs from 'node:fs';
import path from 'node:path';
import { UUID_V7, type NewEvent, type NewWakeScheduled, type SessionEvent, type SessionSnapshot, type WakeRecord } from '../schema/index.js';
import { iso } from '../foundation/clock.js';
import { sessionPaths, type Home, type SessionPaths } from '../foundation/home.js';
import { Redactor } from '../foundation/redact.js';
import { readLines, readLinesBefore, START, type Cursor, type RawLine } from './jsonl.js';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { createdEvent, discardSessionDir, listSessionIds, removeAbandonedCreations } from './session-dirs.js';
import { stampEvent } from './stamp.js';
import { pinReadTimes } from './read-times.js';
import { followEvents, subscribeEvents, type FollowOptions } from './follow-events.js';
import { parseEventLine, parseWakeLine } from './parse-line.js';
import { foldJournals } from './fold-journals.js';
import { loadRunKey, proofHolds, runProof, RunKeyCache, writeNewRunKey, type RunKey } from './run-key.js';
import { writeJsonAtomic } from './atomic-file.js';
import { Durability, COMMITS } from './durability.js';
import type { AppendOptions, CreateSessionInput, EventLines, ReadEventsOptions, SnapshotOptions, StoreDeps, StoreOptions } from './store-types.js';
import { readSnapshotFile, sameCursors, writeSnapshotFileIfMoved } from './snapshot-file.js';
import { FoldCache, fileStamp, journalStamp } from './fold-cache.js';
import { homeIsShared } from './shared-home.js';
import { deliverLines } from './deliver-line.js';
import { logFormatAt, requireLog } from './session-log.js';

export type { AppendOptions, CreateSessionInput, EventLines, ReadEventsOptions, SnapshotOptions, StoreDeps, StoreOptions } from './store-types.js';
export { START, type Cursor } from './jsonl.js';
export type { FollowOptions } from './follow-events.js';

/** How much of a log snapshotAsync folds between two turns of the event loop (about 25 ms of folding). */
export const SLICE_BYTES = 1024 * 1024;

export class SessionStore {
  readonly durability: Durability;
  /** Folds of unchanged journals, kept in memory (fold-cache.ts). */
  private readonly folds = new FoldCache();

  constructor(
    readonly home: Home,
    readonly deps: StoreDeps,
    opts: StoreOptions = {},
  ) {
    this.durability = new Durability(opts.fsync, opts.syncFd);
    this.sharedSetting = opts.shared;
  }

  private sharedSetting: boolean | undefined;

  /** Whether hosts share this home (StoreOptions.shared, else judged once: shared-home.ts). */
  get shared(): boolean {
    return (this.sharedSetting ??= homeIsShared(this.home));
  }

  /** Appends to one of the session's journals through the durability policy. */
  private append(p: SessionPaths, file: string, lines: readonly string[], commit: boolean): void {
    this.durability.append(file, lines, commit, [p.events, p.wakeQueue]);
  }

  paths(sessionId: string): SessionPaths {
    return this.home.session(sessionId);
  }

  exists(sessionId: string): boolean {
    return UUID_V7.test(sessionId) && fs.existsSync(this.paths(sessionId).events);
  }

  /** Throws not_found unless the session exists. */
  require(sessionId: string): SessionPaths {
    return requireLog(this.home, sessionId);
  }

  /** require(), before a write: nothing is written to a log of a format this code does not read. */
  private forWrite(sessionId: string): SessionPaths {
    const p = this.require(sessionId);
    this.formatOf(sessionId, p);
    return p;
  }

  create(input: CreateSessionInput): SessionSnapshot {
    const id = this.deps.ids.uuid();
    const final = this.paths(id);
    fs.mkdirSync(this.home.sessionsDir, { recursive: true });
    const tmpDir = path.join(this.home.sessionsDir, `.creating-${id}`);
    const tmp = sessionPaths(tmpDir);
    fs.mkdirSync(tmp.workspace, { recursive: true });
    fs.mkdirSync(tmp.runtime, { recursive: true });
    // No inbox/: it is made on first use (dropInInbox, or a writer's `mkdir -p`), so an idle session costs the daemon one watch, not two.
    writeNewRunKey(tmpDir);
    const created = this.stamp(createdEvent(input));
    this.append(tmp, tmp.events, [JSON.stringify(created)], true);
    fs.writeFileSync(tmp.wakeQueue, '');
    const snap = this.fold(id, tmp, null);
    // A cache: not synced (after a power loss it is rebuilt from the log).
    writeJsonAtomic(tmp.snapshot, snap, { durable: false });
    this.durability.syncDir(tmpDir);
    fs.renameSync(tmpDir, final.dir);
    this.durability.syncDir(this.home.sessionsDir);
    return this.snapshot(id);
  }

  /**
   * Removes a session that was just made and that nothing names yet (no
   * task, no parent's record): spawn_session's child when the spawn is
   * refused after the child was made. Only for that: a session anyone has
   * seen is never removed by the runtime.
   */
  discardUnborn(sessionId: string): void {
    this.require(sessionId);
    discardSessionDir(this.home.sessionsDir, sessionId);
  }

  /** Removes half-made sessions older than `olderThanMs` (see session-dirs.ts); returns how many. */
  removeAbandonedCreations = (olderThanMs: number): number => removeAbandonedCreations(this.home.sessionsDir, this.deps.clock.now(), olderThanMs);

  /** Ids of every session directory, oldest first (UUIDv7 sorts by time). */
  listIds = (): string[] => listSessionIds(this.home.sessionsDir);

  /**
   * The session's current snapshot: session.json continued with whatever the
   * journals gained since it was written.
   */
  snapshot(sessionId: string, opts: SnapshotOptions = {}): SessionSnapshot {
    const p = this.paths(sessionId);
    // Stamped before anything is read (fold-cache.ts); no log is not_found.
    const journals = journalStamp(p);
    if (journals === null) this.require(sessionId);
    const kept = journals === null ? null : this.folds.get(sessionId, `${journals}|${fileStamp(p.snapshot)}`);
    if (kept) {
      // Pinned as the reads so far saw them: the kept fold's due times, continued (and not kept: the queue grows).
      if (opts.pin && kept.snap.pending_wakes.some((w) => w.provisional)) return this.finishSnapshot(sessionId, p, kept.snap, null, opts);
      if (!kept.saved && this.saves(p, opts)) {
        writeSnapshotFileIfMoved(p.snapshot, kept.snap, null);
        this.folds.set(sessionId, `${journals}|${fileStamp(p.snapshot)}`, structuredClone(kept.snap), true);
      }
      return kept.snap;
    }
    const cached = readSnapshotFile(p.snapshot, sessionId);
    const before = cached ? structuredClone(cached.journals) : null;
    const snap = this.finishSnapshot(sessionId, p, cached, before, opts);
    if (journals === null) return snap;
    // Saved: written now, or session.json already stops where this fold does.
    const saved = this.saves(p, opts) || (before !== null && sameCursors(before, snap.journals));
    this.folds.set(sessionId, `${journals}|${fileStamp(p.snapshot)}`, snap, saved);
    return structuredClone(snap);
  }

  /** Whether a snapshot read with `opts` writes its cursors to session.json now (see finishSnapshot). */
  private saves(p: SessionPaths, opts: SnapshotOptions): boolean {
    return opts.persist !== false && !this.durability.pending([p.events, p.wakeQueue]);
  }

  /**
   * snapshot() for a process that must not stall (the daemon): when more
   * than SLICE_BYTES of the log are unfolded (a 100,000-event log with no
   * session.json takes over half a second), its events are folded a slice at
   * a time, yielding to the event loop between slices; the wake queue and
   * the derived fields follow in one last fold, as in snapshot(), so the
   * result is the same. Slices are kept in memory, not written.
   */
  async snapshotAsync(sessionId: string, opts: SnapshotOptions = {}): Promise<SessionSnapshot> {
    const p = this.require(sessionId);
    const cached = readSnapshotFile(p.snapshot, sessionId);
    const before = cached ? structuredClone(cached.journals) : null;
    let base = cached;
    for (;;) {
      const st = fs.statSync(p.events, { throwIfNoEntry: false });
      const from = base && st && base.journals.events.ino === st.ino ? base.journals.events.offset : 0;
      if (!st || st.size - from <= SLICE_BYTES) break;
      base = this.fold(sessionId, p, base && from > 0 ? base : null, { eventsUntil: from + SLICE_BYTES });
      await yieldToLoop();
    }
    return this.finishSnapshot(sessionId, p, base, before, opts);
  }

  private finishSnapshot(sessionId: string, p: SessionPaths, cached: SessionSnapshot | null, cachedCursors: SessionSnapshot['journals'] | null, opts: SnapshotOptions): SessionSnapshot {
    let snap = this.fold(sessionId, p, cached);
    if (opts.pin && snap.pending_wakes.some((w) => w.provisional)) {
      const now = iso(this.deps.clock.now());
      const pins = snap.pending_wakes
        .filter((w) => w.provisional)
        .map((w) => JSON.stringify({ type: 'wake.scheduled', id: w.id, due_at: w.due_at, reason: w.reason, source: w.source, created_at: now }));
      this.append(p, p.wakeQueue, pins, true);
      snap = this.fold(sessionId, p, snap);
    }
    // Cursors that count lines a power loss could still take are not saved (see durability.ts).
    if (this.saves(p, opts)) writeSnapshotFileIfMoved(p.snapshot, snap, cachedCursors);
    return snap;
  }

  /**
   * The format of the session's log (its first line's `format`; 0 when it has
   * none). Throws unsupported_log_format for a log this code does not read:
   * every read (snapshot, readEvents, follow) and write goes through here
   * first, so such a session is reported, never misread, written or run.
   */
  logFormat(sessionId: string): number {
    return this.formatOf(sessionId, this.require(sessionId));
  }

  private formatOf(sessionId: string, p: SessionPaths): number {
    return logFormatAt(this.home, sessionId, p.events);
  }

  /** Folds the journals onto `base` (mutated and returned) or from scratch (fold-journals.ts). */
  private fold(sessionId: string, p: SessionPaths, base: SessionSnapshot | null, slice: { eventsUntil?: number } = {}): SessionSnapshot {
    return foldJournals(
      {
        sessionId,
        paths: p,
        now: this.deps.clock.now(),
        format: () => this.formatOf(sessionId, p),
        verify: (trusted) => (runId, proof, line) => proofHolds(this.runKey(sessionId, trusted), sessionId, runId, proof, line),
      },
      base,
      slice,
    );
  }

  private readonly keys = new RunKeyCache();

  /**
   * The session's run key (made on first use for a session from before keys;
   * see run-key.ts). `trustedLines`: how many lines a fold judged before the
   * caller's; by default session.json's cursor (a writer stamping a proof
   * comes after a fold that met no run to judge, so its lines are judged).
   */
  runKey(sessionId: string, trustedLines?: number): RunKey {
    const p = this.paths(sessionId);
    return this.keys.get(sessionId, () => loadRunKey(p.dir, trustedLines ?? readSnapshotFile(p.snapshot, sessionId)?.journals.events.line ?? 0));
  }

  /** Fills in the envelope of a runtime-written event and validates it (stamp.ts). */
  stamp(e: NewEvent, wakeId?: string): SessionEvent {
    return stampEvent(this.deps, e, wakeId);
  }

  /**
   * Appends events to the session's log in one write and returns them as
   * written (ids assigned, secrets redacted).
   */
  appendEvents(sessionId: string, events: readonly NewEvent[], opts: AppendOptions = {}): SessionEvent[] {
    const p = this.forWrite(sessionId);
    const redactor = opts.redactor ?? Redactor.none;
    // A run's opening record carries its proof: whoever writes through the store is the runtime.
    const proven = events.map((e) => (e.type === 'session.status_running' && !e.continuation && e.proof === undefined ? { ...e, proof: runProof(this.runKey(sessionId), sessionId, e.wake_id) } : e));
    const stamped = proven.map((e) => redactor.deep(this.stamp(e, opts.wakeId)));
    const commit = opts.durable ?? (opts.wakeId === undefined || stamped.some((e) => COMMITS.has(e.type)));
    this.append(p, p.events, stamped.map((e) => JSON.stringify(e)), commit);
    return stamped;
  }

  /** Appends a user event as a person would: id and created_at included, no wake_id. */
  appendUserEvent(sessionId: string, event: NewEvent): SessionEvent {
    return this.appendEvents(sessionId, [event], { durable: true })[0] as SessionEvent;
  }

  /**
   * A person's event, from a process that does not hold the session's lease
   * (the CLI, the HTTP API, a parent's run writing to its child): appended,
   * or on a shared home dropped into `inbox/` for the run that holds the
   * lease to move in (shared-home.ts), and the home's doorbell rung for it
   * (ring.ts: a polling daemon on another host hears it within 100 ms).
   * Returned as it will be in the log; on a shared home it is there once a
   * run has taken it in.
   */
  deliverUserEvent(sessionId: string, event: NewEvent): SessionEvent {
    return this.deliverEvents(sessionId, [event])[0] as SessionEvent;
  }

  /**
   * deliverUserEvent for several events that belong together (one write:
   * one append, or one inbox/ file), and for what another session writes
   * into this one (a child's report to its parent, a spawn's task) or a
   * run writes through the API (`opts`: the run's id and redactor, for a
   * line the fold accepts while that run is in progress). Durable.
   */
  deliverEvents(sessionId: string, events: readonly NewEvent[], opts: Pick<AppendOptions, 'wakeId' | 'redactor'> = {}): SessionEvent[] {
    if (!this.shared) return this.appendEvents(sessionId, events, { ...opts, durable: true });
    const p = this.forWrite(sessionId);
    const redactor = opts.redactor ?? Redactor.none;
    const stamped = events.map((e) => redactor.deep(this.stamp(e, opts.wakeId)));
    deliverLines(p, stamped.map((e) => JSON.stringify(e)), { shared: true, durability: this.durability });
    return stamped;
  }

  /** Appends a wake.scheduled (a recurring one's rule as its `every`, or `cron` and `timezone`, fields) and returns it. */
  scheduleWake(sessionId: string, w: NewWakeScheduled): WakeRecord & { type: 'wake.scheduled' } {
    const p = this.forWrite(sessionId);
    const rec = {
      type: 'wake.scheduled' as const,
      id: this.deps.ids.wake(),
      due_at: w.due_at,
      reason: w.reason,
      source: w.source,
      created_at: w.created_at ?? iso(this.deps.clock.now()),
      ...(w.retry_of ? { retry_of: w.retry_of } : {}),
      ...(w.attempt ? { attempt: w.attempt } : {}),
      ...(w.wake_run_id ? { wake_run_id: w.wake_run_id } : {}),
    };
    this.append(p, p.wakeQueue, [JSON.stringify({ ...rec, ...w.recurrence })], true);
    return { ...rec, ...(w.recurrence ? { recurrence: w.recurrence } : {}) };
  }

  /** Appends wake.consumed / wake.cancelled records in one write. */
  settleWakes(sessionId: string, type: 'wake.consumed' | 'wake.cancelled', wakeIds: readonly string[], detail: { wakeRunId?: string; reason?: string }): void {
    if (wakeIds.length === 0) return;
    const p = this.forWrite(sessionId);
    const at = iso(this.deps.clock.now());
    const lines = wakeIds.map((id) =>
      JSON.stringify(
        type === 'wake.consumed'
          ? { type, wake_id: id, wake_run_id: detail.wakeRunId ?? 'unknown', at }
          : { type, wake_id: id, reason: detail.reason ?? 'cancelled', at },
      ),
    );
    this.append(p, p.wakeQueue, lines, true);
  }

  /**
   * The raw lines of the log just before `end` (at least `minBytes` of them
   * when the log has that many, whole lines only), oldest first: for a
   * reader that goes back from a cursor (a run's window of the log, a
   * child's last message) and parses them itself, in the log's format
   * (logFormat). Throws not_found.
   */
  readRawBefore(sessionId: string, end: Cursor, minBytes: number): RawLine[] {
    return readLinesBefore(this.require(sessionId).events, end, minBytes);
  }

  /**
   * The raw lines of the log after `from`, up to `until` (a byte offset: a
   * reader that must not read past what the fold judged) or `maxLines`, with
   * the cursor to read on from: readEvents without the parsing, for a reader
   * that parses in its own way (a run's window). Throws not_found.
   */
  readRaw(sessionId: string, from: Cursor, opts: { until?: number; maxLines?: number } = {}): { lines: RawLine[]; cursor: Cursor; reset: boolean } {
    return readLines(this.require(sessionId).events, from, opts);
  }

  /**
   * The log's complete lines after `from`, parsed (events, rejections,
   * blanks) and brought up to the current format, with the cursor to pass
   * next time to read on from where this read ended. START reads from line
   * 1; the cursor of a previous read, or a snapshot's `journals.events`,
   * reads only what came after it (cost: the new bytes). A cursor is a byte
   * offset with its line count and the file's inode (0: any file): one whose
   * file was replaced, or whose offset no longer ends a line, reads from
   * line 1 again and says so (`reset`). An unfinished last line (no "\n"
   * yet) is not read; the cursor stops before it.
   *
   * An event whose line has no created_at shows its pinned time (read-times.ts).
   * Throws not_found, or unsupported_log_format (see logFormat).
   */
  readEvents(
    sessionId: string,
    from: Cursor = START,
    opts: ReadEventsOptions = {},
  ): EventLines {
    const p = this.require(sessionId);
    const now = this.deps.clock.now();
    const format = this.formatOf(sessionId, p);
    const r = readLines(p.events, from, opts.maxLines !== undefined ? { maxLines: opts.maxLines } : {});
    const lines = r.lines.map((raw) => parseEventLine(raw, now, format));
    const take = () => new Map(this.snapshot(sessionId).pending_events.flatMap((e) => (e.read_at ? [[e.id, e.read_at] as const] : [])));
    const memo = opts.readTimes;
    const pending = memo ? () => (memo.pending ??= take()) : take;
    return { lines: pinReadTimes(lines, pending), cursor: r.cursor, reset: r.reset };
  }

  /**
   * The log's lines as they come: batches from `opts.from` on (what is there,
   * then each append), until `opts.signal` aborts; an unfinished last line
   * waits until it is whole. Contract: follow-events.ts.
   */
  follow(sessionId: string, opts: FollowOptions = {}): AsyncGenerator<EventLines, void, void> {
    return followEvents(this, sessionId, opts);
  }

  /** follow() with a callback, called once per batch (awaited); resolves when `opts.signal` aborts. */
  subscribe(sessionId: string, opts: FollowOptions, onLines: (batch: EventLines) => void | Promise<void>): Promise<void> {
    return subscribeEvents(this, sessionId, opts, onLines);
  }

  /** Every record of the wake queue, parsed. */
  readWakes(sessionId: string) {
    const p = this.require(sessionId);
    const now = this.deps.clock.now();
    return readLines(p.wakeQueue).lines.map((raw) => parseWakeLine(raw, now));
  }
}
