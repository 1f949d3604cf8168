/**
 * The scan of an agent's memory/ that records what changed since the last
 * (scanAndRecord), its bounds (entries, bytes, changes, stored bytes, time),
 * and the removal of a crash's temp files. A run's scans share a ScanState
 * (memory-run.ts); what is not versioned and how a known write is recorded
 * are memory-dir.ts's.
 */
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { iso, type Clock } from '../foundation/clock.js';
import { DIRECTORY_PATH, MEMORY_DOCUMENT_MAX_BYTES, type VersionLine, type VersionOp } from '../schema/index.js';
import { TEMP_NAME } from '../sandbox/atomic-replace.js';
import { VirtualFs } from '../sandbox/virtual-fs.js';
import { Redactor } from '../foundation/redact.js';
import { RACY_MS, scanTree, type ScannedFile } from './tree-scan.js';
import { dirMemo, type DirMemo } from './dir-memo.js';
import { notVersioned, type Who } from './memory-dir.js';
import { appendVersions, removeStaleStoreTemps, storeContents, withLogLock, type VersionedDir } from './version-store.js';

/** Bounds of one scan of memory/ (see tree-scan.ts): entries looked at, and bytes read in all. */
export const MEMORY_SCAN_MAX_ENTRIES = 10_000;
export const MEMORY_SCAN_MAX_BYTES = 64 * 1024 * 1024;
/** Lines one scan appends at most; the other changes are recorded by the next scans (a scan_incomplete marker says so). */
export const MEMORY_SCAN_MAX_CHANGES = 1_000;
/** New content bytes the scans of one run store at most; past it a change is logged `over_quota` (no content). */
export const MEMORY_RUN_MAX_STORED_BYTES = 64 * 1024 * 1024;
/** The agent's memory store at most (bytes and contents, as its log counts them); past it a change is logged `over_quota`. */
export const MEMORY_STORE_MAX_BYTES = 1024 * 1024 * 1024;
export const MEMORY_STORE_MAX_CONTENTS = 100_000;
/** A temp file (atomic write) older than this is a crash's leftover, removed at a run's first scan. */
export const MEMORY_TEMP_STALE_MS = 10 * 60_000;
/**
 * How long a scan may walk the directory, and then as long again to store
 * what changed (see scanAndRecord). A turn that called a tool waits for its
 * scan, so this bounds what an agent's memory/ adds to a turn: about twice
 * this, plus another session's storing it may have to wait for. A normal
 * scan takes milliseconds; the walk of 10,000 new files takes 0.3–1.2 s
 * (2 cores, idle to busy); storing is one fsync per new content, 1–3 ms
 * each on a local disk, so a second stores several hundred to the 1,000
 * contents one scan may record, and the rest waits for the next scans.
 * Without it, one turn's scan of 10,050 new files took 2.9–6.8 s there,
 * growing with the disk's fsync time.
 */
export const MEMORY_SCAN_BUDGET_MS = 1000;
/** Contents a scan stores whatever its budget, so every scan makes progress. */
export const SCAN_MIN_STORED = 16;

/** The limits a scan state enforces (the constants above; tests pass smaller ones). */
export interface ScanLimits {
  maxChanges: number;
  runMaxStoredBytes: number;
  storeMaxBytes: number;
  storeMaxContents: number;
  tempStaleMs: number;
  /** See tree-scan.ts RACY_MS. */
  racyMs: number;
  /** How long the walk may take, and the storing (see MEMORY_SCAN_BUDGET_MS). */
  walkBudgetMs: number;
  storeBudgetMs: number;
}

export const MEMORY_SCAN_LIMITS: ScanLimits = {
  maxChanges: MEMORY_SCAN_MAX_CHANGES,
  runMaxStoredBytes: MEMORY_RUN_MAX_STORED_BYTES,
  storeMaxBytes: MEMORY_STORE_MAX_BYTES,
  storeMaxContents: MEMORY_STORE_MAX_CONTENTS,
  tempStaleMs: MEMORY_TEMP_STALE_MS,
  racyMs: RACY_MS,
  walkBudgetMs: MEMORY_SCAN_BUDGET_MS,
  storeBudgetMs: MEMORY_SCAN_BUDGET_MS,
};

/** The learnings render's temp file (writeFileAtomic), at the top of memory/. */
const LEARNINGS_TEMP = /^\.LEARNINGS\.md\.[0-9a-f]{12}\.tmp$/;

/** Whether a path of memory/ is named like a temp file of an atomic write (which stale-temp removal may remove). */
function tempNamed(rel: string): boolean {
  return LEARNINGS_TEMP.test(rel) || TEMP_NAME.test(rel.slice(rel.lastIndexOf('/') + 1));
}

/**
 * What one run's scans share: the last scan's files (a cache: a file whose
 * identity did not change is not read again within the run), the
 * directory's memo (dir-memo.ts: the log's latest lines, shared with every
 * run of this process), the bytes this run's scans stored, which
 * scan_incomplete reasons it logged (each once per run), whether it
 * looked for stale temps, the run's Redactor, and the clock its budget is
 * measured on.
 */
export interface ScanState {
  cache: Map<string, ScannedFile>;
  /** Every path and content is versioned as this redacts it (the run's: the secrets of every session of the agent). */
  redactor: Redactor;
  memo: DirMemo;
  limits: ScanLimits;
  storedBytes: number;
  noted: Set<string>;
  tidied: boolean;
  /** A monotonic time in ms, for the scan's budget (performance.now; tests count work instead). */
  now: () => number;
}

/**
 * Whether this scan should look for stale temps: the run's first, and the
 * directory's first in tempStaleMs in this process. A temp is stale only
 * after tempStaleMs, so looking more often finds nothing new; looking at
 * every run's first scan cost each run several trips through the thread
 * pool, inside the lock every session of the agent waits on.
 */
function dueForTidy(state: ScanState, now: number): boolean {
  if (state.tidied) return false;
  state.tidied = true;
  const last = state.memo.tidiedAt;
  if (last !== null && now >= last && now - last < state.limits.tempStaleMs) return false;
  state.memo.tidiedAt = now;
  return true;
}

export function newScanState(v: VersionedDir, limits: Partial<ScanLimits> = {}, redactor: Redactor = Redactor.none, now: () => number = () => performance.now()): ScanState {
  return { cache: new Map(), redactor, memo: dirMemo(v), limits: { ...MEMORY_SCAN_LIMITS, ...limits }, storedBytes: 0, noted: new Set(), tidied: false, now };
}

/**
 * Removes temp files (TEMP_NAME at any depth, the learnings render's at
 * the top) whose mtime is older than `olderThanMs`, in memory/ (by the
 * race-free walk: each unlink is of a name in a directory descriptor) and
 * in the store. A younger one may be a write in progress in another
 * process. The agent can name a file of its own like that: it was
 * versioned by an earlier scan, and its removal is recorded as a delete.
 * Best effort; returns how many were removed.
 */
export async function removeStaleTemps(v: VersionedDir, now: number, olderThanMs: number): Promise<number> {
  let removed = await removeStaleStoreTemps(v, now, olderThanMs);
  const vfs = new VirtualFs([{ target: '/d', host: v.dir, writable: false }], { home: '/d' });
  let root;
  try {
    root = vfs.open('/d');
  } catch {
    return removed;
  }
  try {
    if (!root.stat.isDirectory()) return removed;
    await vfs.walk(
      root,
      (e) => {
        if (tempNamed(e.rel) && now - e.stat.mtimeMs > olderThanMs) {
          try {
            e.remove();
            removed += 1;
          } catch {
            // gone or replaced meanwhile
          }
        }
        return true;
      },
      { maxEntries: MEMORY_SCAN_MAX_ENTRIES },
    );
  } finally {
    root.close();
  }
  return removed;
}

/**
 * Scans the directory and records every difference from the log's latest
 * versions: a new or changed file (`write`, its content stored; `too_large`
 * for one over the document bound and `over_quota` for one past the run's
 * budget or the store's quota, their content not stored), a file gone
 * (`delete`, only when the scan was complete and the file was not being
 * changed). At most limits.maxChanges lines per scan: the other changes
 * wait for the next scan. When the scan stopped short (a bound, the
 * directory changing under it, its time budget, or too many changes) a
 * `scan_incomplete` marker says why, once per run and reason. The run's
 * first scan removes stale temp files first (at most once per tempStaleMs
 * per directory in a process: see dueForTidy).
 *
 * Bounded in time as well as in work, whatever the agent does to the
 * directory meanwhile: the walk stops once limits.walkBudgetMs has passed
 * (the scan is then incomplete), and the storing of contents once
 * limits.storeBudgetMs has passed since it began, after at least
 * SCAN_MIN_STORED of them (the changes left are recorded by the next
 * scans); time is state.now's (monotonic). The walk, the part the agent
 * controls, runs outside the log's lock: only comparing, storing and
 * appending are serialised with the other writers of the log (another
 * session's file tools, its scans), so none of them waits on this
 * directory's walk. A path recorded by another writer after the walk began
 * is left to the next scan: not inferred deleted (the walk may have passed
 * by before it was there), nor written over with what the walk saw (which
 * may be older than that record).
 *
 * Never blocks the event loop for long: the walk and the reads yield, the
 * contents are written asynchronously, each touched store directory is
 * fsynced once, and all lines are appended in one write and one fsync,
 * after the contents they name are durable. Returns the lines appended.
 * Throws only on an I/O failure of the log or the store (the next scan
 * tries again: nothing is lost but the moment).
 */
export async function scanAndRecord(v: VersionedDir, state: ScanState, who: Who, clock: Clock, signal?: AbortSignal): Promise<VersionLine[]> {
  const lim = state.limits;
  const spent = (t0: number, budget: number) => state.now() - t0 >= budget;
  const walkStart = state.now();
  if (dueForTidy(state, clock.now())) await removeStaleTemps(v, clock.now(), lim.tempStaleMs);
  // Which contents to keep is judged by the log as of now; what it gains during the walk is read in the lock below.
  const known = state.memo.latest.refresh();
  const mark = known.taken;
  const wanted = (rel: string, sha: string) => known.present(rel)?.sha256 !== sha;
  const overBudget = () => (spent(walkStart, lim.walkBudgetMs) ? `the scan took longer than its time budget (${lim.walkBudgetMs} ms)` : null);
  const red = state.redactor;
  const scan = await scanTree(v.dir, { maxEntries: MEMORY_SCAN_MAX_ENTRIES, maxFileBytes: MEMORY_DOCUMENT_MAX_BYTES, maxTotalBytes: MEMORY_SCAN_MAX_BYTES, exclude: notVersioned, cache: state.cache, wanted, overBudget, signal, racyMs: lim.racyMs, ...(red.active ? { name: (rel: string) => red.text(rel), content: (data: Buffer) => red.bytes(data) } : {}) });
  state.cache = scan.files;
  return withLogLock(v, async () => {
    const latest = state.memo.latest.refresh();
    const at = iso(clock.now());
    const line = (rel: string, op: VersionOp, sha256: string | null, bytes: number | null, message?: string): VersionLine => ({ path: rel, sha256, op, bytes, session_id: who.session_id, wake_id: who.wake_id, at, ...(message !== undefined ? { message } : {}) });
    let lines: VersionLine[] = [];
    /** Contents to store, each with its line's index and the bytes it adds to the store (0: stored already). */
    const toStore: Array<{ at: number; data: Buffer; adds: number }> = [];
    const newShas = new Set<string>();
    let newBytes = 0;
    let carried = false;
    const room = () => {
      if (lines.length < lim.maxChanges) return true;
      carried = true;
      return false;
    };
    let n = 0;
    for (const f of scan.files.values()) {
      const data = f.data;
      delete f.data; // the cache keeps hashes, not contents
      if (++n % 256 === 0) await yieldToLoop();
      // Recorded by another writer since the walk began: that record may be fresher than what the walk saw. The next scan looks again.
      if (latest.newerThan(f.rel, mark)) continue;
      const last = latest.present(f.rel);
      if (f.sha256 === null) {
        if (last?.op === 'too_large' && last.bytes === f.bytes) continue;
        if (room()) lines.push(line(f.rel, 'too_large', null, f.bytes));
        continue;
      }
      if (last && last.sha256 === f.sha256) continue;
      if (!data || !room()) continue; // not read this time, or no room: a later scan records it
      const fresh = !latest.stored.has(f.sha256) && !newShas.has(f.sha256);
      const over =
        fresh &&
        (state.storedBytes + newBytes + data.length > lim.runMaxStoredBytes ||
          latest.storedBytes + newBytes + data.length > lim.storeMaxBytes ||
          latest.stored.size + newShas.size + 1 > lim.storeMaxContents);
      if (over) {
        lines.push(line(f.rel, 'over_quota', f.sha256, data.length));
        continue;
      }
      if (fresh) {
        newShas.add(f.sha256);
        newBytes += data.length;
      }
      toStore.push({ at: lines.length, data, adds: fresh ? data.length : 0 });
      lines.push(line(f.rel, 'write', f.sha256, data.length));
    }
    if (scan.complete) {
      for (const [rel, last] of latest.byPath) {
        if (last.op === 'delete' || scan.files.has(rel) || scan.unsure.has(rel) || notVersioned(rel)) continue;
        // Recorded since the walk began (another session's write): the walk may have passed it before it was there.
        if (latest.newerThan(rel, mark)) continue;
        if (room()) lines.push(line(rel, 'delete', null, null));
      }
    }
    // Contents first (durable), then their lines: a line never names content that is not there.
    const storeStart = state.now();
    const shas = await storeContents(
      v,
      toStore.map((s) => s.data),
      (done) => done >= SCAN_MIN_STORED && spent(storeStart, lim.storeBudgetMs),
    );
    toStore.forEach((s, i) => {
      if (i < shas.length && shas[i] !== lines[s.at]!.sha256) throw new Error('a content changed while it was stored');
    });
    // The writes whose content the budget left unstored wait for the next scans.
    const unstored = new Set(toStore.slice(shas.length).map((s) => s.at));
    if (unstored.size > 0) lines = lines.filter((_, i) => !unstored.has(i));
    const stored = toStore.slice(0, shas.length).reduce((sum, s) => sum + s.adds, 0);
    const why = !scan.complete ? (scan.incomplete ?? 'a bound was reached') : carried ? `more than ${lim.maxChanges} changes at once` : unstored.size > 0 ? `more changes than its time budget (${lim.storeBudgetMs} ms) could store` : null;
    if (why !== null && !state.noted.has(why)) {
      state.noted.add(why);
      lines.push(line(DIRECTORY_PATH, 'scan_incomplete', null, null, `${why}: ${scan.complete ? 'the other changes are recorded by the next scans' : 'no deletion was inferred; the rest is recorded by a later scan'}`));
    }
    appendVersions(v, lines);
    state.storedBytes += stored;
    for (const l of lines) latest.take(l);
    return lines;
  });
}
