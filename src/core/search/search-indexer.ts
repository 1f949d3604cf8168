/**
 * Keeps the search index (search-db.ts) in step with the logs: reads what
 * each session's events.jsonl and each agent's learnings.jsonl gained since
 * its saved cursor, and indexes it.
 *
 * Contracts:
 * - Incremental: a log is read from its cursor (SessionStore.readEvents),
 *   at most CHUNK_LINES lines at a time, so memory is bounded by one chunk
 *   whatever the size of a log or of the home.
 * - Exactly once: each chunk is one `BEGIN IMMEDIATE` transaction that reads
 *   the cursor, reads the log from it, inserts the rows and saves the new
 *   cursor. Rows and cursor commit together or not at all, so a kill -9
 *   anywhere neither skips nor repeats a line; a second writer (another
 *   process) waits for the lock and then reads the moved cursor.
 * - A log that was replaced (readEvents' `reset`) loses its rows in the same
 *   transaction that indexes it again from line 1. A session folder that is
 *   gone loses its rows at the next catchUpAll.
 * - A bad line (not JSON, not an event) is skipped: the cursor moves past
 *   it and indexing goes on. A log of a format this code does not read is
 *   left out and reported.
 * - Redacted: every text (an event's, a learning's: with the Redactor of
 *   the session it came from) is passed whole through the session's Redactor
 *   (its environment's secrets as `env` has them) before it is cut and
 *   stored, since the snippets go back to a model. The runtime redacts what
 *   it writes; this also covers lines a person or a program appended by
 *   hand. Search redacts again at output (session-search.ts).
 * - SQLITE_BUSY (another process holds the write lock longer than the
 *   connection's busy timeout) stops the whole catch-up at once and is
 *   reported in `busy`: the next catch-up (the daemon's sweep, the next
 *   search) retries, instead of every further session waiting out the
 *   timeout again.
 * - Never throws for a session; catchUp* return what they did.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Statement, Transaction } from 'better-sqlite3';
import { DEFINITION_ID, LearningEntry, LearningRetire, type SessionEvent } from '../schema/index.js';
import { OpenboaError } from '../foundation/errors.js';
import { SessionRedactors } from './session-redactors.js';
import { learningsPaths, merged } from '../memory/learnings.js';
import { readLines, START, type Cursor } from '../store/jsonl.js';
import type { SessionStore } from '../store/session-store.js';
import { indexedText } from './event-text.js';
import { scopeToken, type SearchDb } from './search-db.js';

/** Lines read and indexed per transaction: bounds memory and how long the write lock is held (a few ms). */
export const CHUNK_LINES = 1000;


interface SessionRow {
  session_id: string;
  agent_id: string;
  environment_id: string | null;
  overrides: string | null;
  title: string | null;
  created_at: string | null;
  cur_offset: number;
  cur_line: number;
  cur_ino: number;
}

export interface CatchUpReport {
  /** Sessions (and learnings journals) that had something new. */
  sources: number;
  /** Rows added. */
  rows: number;
  /** Sessions whose rows were removed (their folder is gone). */
  removed: number;
  /** Logs left out, and why (a newer format, an unreadable file). */
  problems: Array<{ source: string; message: string }>;
  /** Sessions that may have new lines but were left for later (catchUpAll's `maxSessions` or `stop`, or the lock was busy). */
  deferred: number;
  /** Another process held the write lock past the busy timeout: the catch-up stopped there. */
  busy: boolean;
}

export const emptyReport = (): CatchUpReport => ({ sources: 0, rows: 0, removed: 0, problems: [], deferred: 0, busy: false });

/** Whether `e` is SQLite's "the database is locked" (another writer held the lock past the busy timeout). */
export function isBusy(e: unknown): boolean {
  const code = (e as { code?: string } | null)?.code;
  return code === 'SQLITE_BUSY' || code === 'SQLITE_BUSY_SNAPSHOT' || code === 'SQLITE_LOCKED';
}

/** How one session's catch-up ended: read to the end, the lock was busy, or `stop` said so between chunks. */
export type SessionCatchUp = 'done' | 'busy' | 'stopped';

const cursorOf = (r: { cur_offset: number; cur_line: number; cur_ino: number }): Cursor => ({ offset: r.cur_offset, line: r.cur_line, ino: r.cur_ino });

export class SearchIndexer {
  private readonly q: Record<string, Statement>;
  /** One chunk of a session's log, or of a learnings journal: each a transaction (rows and cursor together). */
  private readonly sessionStep: Transaction<(sessionId: string, readTimes: { pending?: Map<string, string> }, maxLines: number) => { lines: number; rows: number; gone?: boolean }>;
  private readonly learningsStep: Transaction<(agentId: string) => { lines: number; rows: number }>;
  readonly redactors: SessionRedactors;

  constructor(
    readonly db: SearchDb,
    private readonly store: SessionStore,
    /** Where `{secret: {env: NAME}}` values are read, for redaction (the daemon's environment). */
    env: NodeJS.ProcessEnv,
  ) {
    this.redactors = new SessionRedactors(store, env);
    this.q = {
      session: db.prepare('SELECT * FROM sessions WHERE session_id = ?'),
      cursors: db.prepare('SELECT session_id, agent_id, cur_offset, cur_ino FROM sessions'),
      upsertSession: db.prepare(
        `INSERT INTO sessions (session_id, agent_id, environment_id, overrides, title, created_at, cur_offset, cur_line, cur_ino)
         VALUES (@session_id, @agent_id, @environment_id, @overrides, @title, @created_at, @cur_offset, @cur_line, @cur_ino)
         ON CONFLICT(session_id) DO UPDATE SET agent_id = excluded.agent_id, environment_id = excluded.environment_id, overrides = excluded.overrides,
           title = excluded.title, created_at = excluded.created_at, cur_offset = excluded.cur_offset, cur_line = excluded.cur_line, cur_ino = excluded.cur_ino`,
      ),
      deleteSession: db.prepare('DELETE FROM sessions WHERE session_id = ?'),
      deleteSource: db.prepare('DELETE FROM docs WHERE source = ?'),
      insertDoc: db.prepare(
        `INSERT INTO docs (body, scope, session_id, agent_id, event_id, kind, created_at, line, source, learning_id, learning_key)
         VALUES (@body, @scope, @session_id, @agent_id, @event_id, @kind, @created_at, @line, @source, @learning_id, @learning_key)`,
      ),
      journal: db.prepare('SELECT * FROM learning_journals WHERE agent_id = ?'),
      upsertJournal: db.prepare(
        `INSERT INTO learning_journals (agent_id, cur_offset, cur_line, cur_ino) VALUES (@agent_id, @cur_offset, @cur_line, @cur_ino)
         ON CONFLICT(agent_id) DO UPDATE SET cur_offset = excluded.cur_offset, cur_line = excluded.cur_line, cur_ino = excluded.cur_ino`,
      ),
      learningKey: db.prepare('SELECT learning_key FROM docs WHERE source = ? AND learning_id = ?'),
      retireKey: db.prepare('DELETE FROM docs WHERE source = ? AND learning_key = ?'),
    };
    this.sessionStep = db.transaction((id: string, readTimes: { pending?: Map<string, string> }, maxLines: number) => this.sessionStepBody(id, readTimes, maxLines));
    this.learningsStep = db.transaction((id: string) => this.learningsStepBody(id));
  }

  /**
   * Ids of the sessions whose logs may have lines the index lacks (one stat
   * each), and of indexed sessions whose folder is gone. `agentId`: only
   * that agent's sessions, and sessions not indexed yet (whose agent is not
   * known until they are read), are looked at.
   */
  staleSessions(agentId: string | null = null): { stale: string[]; gone: string[] } {
    const rows = this.q.cursors!.all() as Array<{ session_id: string; agent_id: string; cur_offset: number; cur_ino: number }>;
    const known = new Map(rows.map((r) => [r.session_id, r]));
    const ids = this.store.listIds();
    const present = new Set(ids);
    const dir = this.store.home.sessionsDir;
    const stale = ids.filter((id) => {
      const c = known.get(id);
      if (!c) return true;
      if (agentId !== null && c.agent_id !== agentId) return false;
      // The path by hand, not store.paths(): at 10,000 sessions its nine joins cost as much as the stats.
      const st = fs.statSync(`${dir}${path.sep}${id}${path.sep}events.jsonl`, { throwIfNoEntry: false });
      return !st || st.size !== c.cur_offset || st.ino !== c.cur_ino;
    });
    return { stale, gone: [...known.keys()].filter((id) => !present.has(id)) };
  }

  /**
   * Indexes what one session's log gained since its cursor; every chunk its
   * own transaction. `stop` is asked between chunks (a caller's time budget):
   * when it says so, the rest is left for a later catch-up ('stopped').
   */
  catchUpSession(sessionId: string, report: CatchUpReport = emptyReport(), stop?: () => boolean, chunkLines = CHUNK_LINES): SessionCatchUp {
    /** Lines per chunk (one transaction): at most CHUNK_LINES; a caller pacing itself asks for fewer. */
    const lines = Math.max(1, Math.min(CHUNK_LINES, Math.floor(chunkLines)));
    let first = true;
    // The pending events' read times, read once per call (not once per chunk: quadratic on a long log of hand-written lines).
    const readTimes: { pending?: Map<string, string> } = {};
    for (;;) {
      let step: { lines: number; rows: number; gone?: boolean };
      try {
        step = this.sessionStep.immediate(sessionId, readTimes, lines);
      } catch (e) {
        if (isBusy(e)) {
          report.busy = true;
          return 'busy';
        }
        report.problems.push({ source: `session ${sessionId}`, message: (e as Error).message });
        return 'done';
      }
      if (step.gone) {
        report.removed += 1;
        return 'done';
      }
      if (step.lines > 0 && first) report.sources += 1;
      first = false;
      report.rows += step.rows;
      if (step.lines < lines) return 'done';
      if (stop?.()) return 'stopped';
    }
  }

  /** Removes an indexed session's rows (its folder is gone). */
  forgetSession(sessionId: string): void {
    this.db
      .transaction(() => {
        this.q.deleteSource!.run(`s:${sessionId}`);
        this.q.deleteSession!.run(sessionId);
      })
      .immediate();
  }

  private sessionStepBody(sessionId: string, readTimes: { pending?: Map<string, string> }, maxLines: number): { lines: number; rows: number; gone?: boolean } {
    const row = this.q.session!.get(sessionId) as SessionRow | undefined;
    let batch;
    try {
      batch = this.store.readEvents(sessionId, row ? cursorOf(row) : START, { maxLines, readTimes });
    } catch (e) {
      if (OpenboaError.is(e) && e.code === 'not_found') {
        this.q.deleteSource!.run(`s:${sessionId}`);
        this.q.deleteSession!.run(sessionId);
        return { lines: 0, rows: 0, gone: true };
      }
      throw e;
    }
    const source = `s:${sessionId}`;
    const fresh = !row || batch.reset;
    if (fresh) this.q.deleteSource!.run(source);
    const meta: SessionRow =
      !fresh && row
        ? { ...row }
        : { session_id: sessionId, agent_id: '', environment_id: null, overrides: null, title: null, created_at: null, cur_offset: 0, cur_line: 0, cur_ino: 0 };
    const events: Array<{ line: number; event: SessionEvent }> = [];
    for (const l of batch.lines) {
      if (l.kind !== 'event') continue; // blank and bad lines are skipped; the cursor moves past them
      const e = l.event;
      if (e.type === 'session.created' && l.line === 1) {
        meta.agent_id = e.agent_id;
        meta.environment_id = e.environment_id;
        meta.overrides = e.overrides ? JSON.stringify(e.overrides) : null;
        meta.title = e.title ?? null;
        meta.created_at = e.created_at;
      } else if (e.type === 'session.updated') {
        if (e.title !== undefined) meta.title = e.title ?? null;
        if (e.overrides) meta.overrides = JSON.stringify(e.overrides);
      }
      events.push({ line: l.line, event: e });
    }
    const redactor = this.redactors.of(meta);
    let rows = 0;
    for (const { line, event } of events) {
      const t = indexedText(event, redactor);
      if (!t) continue;
      this.q.insertDoc!.run({
        body: t.text,
        scope: scopeToken(meta.agent_id),
        session_id: sessionId,
        agent_id: meta.agent_id,
        event_id: event.id,
        kind: t.kind,
        created_at: event.created_at,
        line,
        source,
        learning_id: null,
        learning_key: null,
      });
      rows += 1;
    }
    if (meta.title !== null) meta.title = redactor.text(meta.title);
    this.q.upsertSession!.run({ ...meta, cur_offset: batch.cursor.offset, cur_line: batch.cursor.line, cur_ino: batch.cursor.ino });
    return { lines: batch.lines.length, rows };
  }

  /** Agents with a learnings journal. */
  learningAgents(): string[] {
    let names: string[];
    try {
      names = fs.readdirSync(this.store.home.agentsDir);
    } catch {
      return [];
    }
    return names.filter((n) => DEFINITION_ID.test(n) && fs.existsSync(path.join(this.store.home.agentsDir, n, 'learnings.jsonl')));
  }

  /** Indexes what an agent's learnings.jsonl gained; a retire line removes the learnings it retires. */
  catchUpLearnings(agentId: string, report: CatchUpReport = emptyReport()): CatchUpReport {
    // Unchanged (or still missing): no transaction, so a search takes no write lock for nothing.
    const row = this.q.journal!.get(agentId) as { cur_offset: number; cur_ino: number } | undefined;
    const st = fs.statSync(learningsPaths(this.store.home, agentId).journal, { throwIfNoEntry: false });
    if (!st ? !row : row && st.size === row.cur_offset && st.ino === row.cur_ino) return report;
    for (let first = true; ; first = false) {
      let step: { lines: number; rows: number };
      try {
        step = this.learningsStep.immediate(agentId);
      } catch (e) {
        if (isBusy(e)) {
          report.busy = true;
          return report;
        }
        report.problems.push({ source: `learnings of agent ${agentId}`, message: (e as Error).message });
        return report;
      }
      if (step.lines > 0 && first) report.sources += 1;
      report.rows += step.rows;
      if (step.lines < CHUNK_LINES) return report;
    }
  }

  private learningsStepBody(agentId: string): { lines: number; rows: number } {
    const file = learningsPaths(this.store.home, agentId).journal;
    const source = `l:${agentId}`;
    const row = this.q.journal!.get(agentId) as { cur_offset: number; cur_line: number; cur_ino: number } | undefined;
    const r = readLines(file, row ? cursorOf(row) : START, { maxLines: CHUNK_LINES });
    if (r.reset || !row) this.q.deleteSource!.run(source);
    let rows = 0;
    for (const l of r.lines) {
      let v: unknown;
      try {
        v = JSON.parse(l.text);
      } catch {
        continue; // not JSON: `openboa learnings` reports it
      }
      if (v && typeof v === 'object' && (v as { type?: unknown }).type === 'retire') {
        const ret = LearningRetire.safeParse(v);
        if (!ret.success) continue;
        const k = this.q.learningKey!.get(source, ret.data.id) as { learning_key: string } | undefined;
        // The learning and every earlier one merged with it (learnings.ts): the same text learned later comes back.
        if (k) this.q.retireKey!.run(source, k.learning_key);
        continue;
      }
      const le = LearningEntry.safeParse(v);
      if (!le.success) continue;
      const e = le.data;
      // Redacted with the secrets of the session it was learned in (the learn tool redacts too; a hand-written line is not).
      const known = this.q.session!.get(e.session_id) as SessionRow | undefined;
      const redactor = this.redactors.ofSession(e.session_id, known);
      this.q.insertDoc!.run({
        body: redactor.text(`${e.kind}: ${e.text}${e.tags.length ? ` [${e.tags.join(', ')}]` : ''}`),
        scope: scopeToken(agentId),
        session_id: e.session_id,
        agent_id: agentId,
        event_id: e.event_id,
        kind: 'learning',
        created_at: e.at,
        line: l.no,
        source,
        learning_id: e.id,
        learning_key: merged(e),
      });
      rows += 1;
    }
    this.q.upsertJournal!.run({ agent_id: agentId, cur_offset: r.cursor.offset, cur_line: r.cursor.line, cur_ino: r.cursor.ino });
    return { lines: r.lines.length, rows };
  }

  /**
   * Brings the index up to date: every session whose log moved (one stat
   * each for the others), every learnings journal, and removes the rows of
   * sessions that are gone. With `agentId`, only as far as a search scoped
   * to that agent needs: its sessions, new sessions and its learnings.
   * Synchronous; the daemon uses the pieces (staleSessions,
   * catchUpSession) to yield between sessions.
   */
  catchUpAll(
    agentId: string | null = null,
    opts: {
      /** Read at most this many sessions (the rest are `deferred`): bounds a caller that must not stall. */
      maxSessions?: number;
      /** Asked between chunks: true leaves the rest `deferred` (a caller's wall-clock budget). */
      stop?: () => boolean;
    } = {},
  ): CatchUpReport {
    const report = emptyReport();
    const { stale, gone } = this.staleSessions(agentId);
    try {
      for (const id of gone) {
        this.forgetSession(id);
        report.removed += 1;
      }
    } catch (e) {
      if (!isBusy(e)) throw e;
      report.busy = true;
      report.deferred = stale.length;
      return report;
    }
    const max = opts.maxSessions ?? Infinity;
    const bounded = Number.isFinite(max) || opts.stop !== undefined;
    // Newest first (UUIDv7 ids sort by time): a bounded catch-up reads the sessions most likely to matter.
    const order = bounded ? [...stale].reverse() : stale;
    for (let i = 0; i < order.length; i++) {
      if (i >= max || opts.stop?.()) {
        report.deferred += order.length - i;
        break;
      }
      const how = this.catchUpSession(order[i]!, report, opts.stop);
      if (how !== 'done') {
        report.deferred += order.length - i;
        break;
      }
    }
    if (report.busy || opts.stop?.()) return report;
    for (const a of agentId === null ? this.learningAgents() : [agentId]) {
      this.catchUpLearnings(a, report);
      if (report.busy) break;
    }
    return report;
  }
}
