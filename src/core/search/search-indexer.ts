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
 * - Redacted: every text is passed through the session's Redactor (its
 *   environment's secrets as `env` has them) before it is stored, since the
 *   snippets go back to a model. The runtime redacts what it writes; this
 *   also covers lines a person or a program appended by hand.
 * - Never throws for a session; catchUp* return what they did.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Statement, Transaction } from 'better-sqlite3';
import { DEFINITION_ID, LearningEntry, LearningRetire, SessionOverrides, type SessionEvent } from '../schema/index.js';
import { OpenboaError } from '../errors.js';
import { Redactor } from '../redact.js';
import { sessionRedactor } from '../run/environment.js';
import { learningsPaths, merged } from '../learnings.js';
import { readLines, START, type Cursor } from '../store/jsonl.js';
import type { SessionStore } from '../store/session-store.js';
import { indexedText } from './event-text.js';
import { scopeToken, type SearchDb } from './search-db.js';

/** Lines read and indexed per transaction: bounds memory and how long the write lock is held (a few ms). */
export const CHUNK_LINES = 1000;

/** How long a session's Redactor (its environment's secrets) is reused before the environment is read again, ms. */
const REDACTOR_TTL_MS = 10_000;

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
  /** Sessions that may have new lines but were left for later (catchUpAll's `maxSessions`). */
  deferred: number;
}

export const emptyReport = (): CatchUpReport => ({ sources: 0, rows: 0, removed: 0, problems: [], deferred: 0 });

const cursorOf = (r: { cur_offset: number; cur_line: number; cur_ino: number }): Cursor => ({ offset: r.cur_offset, line: r.cur_line, ino: r.cur_ino });

export class SearchIndexer {
  private readonly q: Record<string, Statement>;
  /** One chunk of a session's log, or of a learnings journal: each a transaction (rows and cursor together). */
  private readonly sessionStep: Transaction<(sessionId: string) => { lines: number; rows: number; gone?: boolean }>;
  private readonly learningsStep: Transaction<(agentId: string) => { lines: number; rows: number }>;
  private readonly redactors = new Map<string, { r: Redactor; at: number }>();

  constructor(
    readonly db: SearchDb,
    private readonly store: SessionStore,
    /** Where `{secret: {env: NAME}}` values are read, for redaction (the daemon's environment). */
    private readonly env: NodeJS.ProcessEnv,
  ) {
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
    this.sessionStep = db.transaction((id: string) => this.sessionStepBody(id));
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

  /** Indexes what one session's log gained since its cursor; every chunk its own transaction. */
  catchUpSession(sessionId: string, report: CatchUpReport = emptyReport()): CatchUpReport {
    let first = true;
    for (;;) {
      let step: { lines: number; rows: number; gone?: boolean };
      try {
        step = this.sessionStep.immediate(sessionId);
      } catch (e) {
        report.problems.push({ source: `session ${sessionId}`, message: (e as Error).message });
        return report;
      }
      if (step.gone) {
        report.removed += 1;
        return report;
      }
      if (step.lines > 0 && first) report.sources += 1;
      first = false;
      report.rows += step.rows;
      if (step.lines < CHUNK_LINES) return report;
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

  private sessionStepBody(sessionId: string): { lines: number; rows: number; gone?: boolean } {
    const row = this.q.session!.get(sessionId) as SessionRow | undefined;
    let batch;
    try {
      batch = this.store.readEvents(sessionId, row ? cursorOf(row) : START, { maxLines: CHUNK_LINES });
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
    const redactor = this.redactorFor(meta);
    let rows = 0;
    for (const { line, event } of events) {
      const t = indexedText(event);
      if (!t) continue;
      this.q.insertDoc!.run({
        body: redactor.text(t.text),
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

  /** The session's secrets as `env` has them (reused for REDACTOR_TTL_MS); none when its environment does not load. */
  private redactorFor(meta: SessionRow): Redactor {
    if (!meta.environment_id) return Redactor.none;
    const key = `${meta.environment_id}\u0000${meta.overrides ?? ''}`;
    const now = this.store.deps.clock.now();
    const hit = this.redactors.get(key);
    if (hit && now - hit.at < REDACTOR_TTL_MS) return hit.r;
    let overrides: SessionOverrides = {};
    try {
      overrides = SessionOverrides.parse(meta.overrides ? JSON.parse(meta.overrides) : {});
    } catch {
      // a session.created the schema accepted always parses again; anything else: the environment's secrets alone
    }
    const r = sessionRedactor(this.store.home, meta.environment_id, overrides, this.env);
    if (this.redactors.size > 256) this.redactors.clear();
    this.redactors.set(key, { r, at: now });
    return r;
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
      this.q.insertDoc!.run({
        body: `${e.kind}: ${e.text}${e.tags.length ? ` [${e.tags.join(', ')}]` : ''}`,
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
  catchUpAll(agentId: string | null = null, opts: { /** Read at most this many sessions (the rest are `deferred`): bounds a caller that must not stall. */ maxSessions?: number } = {}): CatchUpReport {
    const report = emptyReport();
    const { stale, gone } = this.staleSessions(agentId);
    for (const id of gone) {
      this.forgetSession(id);
      report.removed += 1;
    }
    const max = opts.maxSessions ?? Infinity;
    // Newest first (UUIDv7 ids sort by time): a bounded catch-up reads the sessions most likely to matter.
    const order = Number.isFinite(max) ? [...stale].reverse() : stale;
    order.forEach((id, i) => {
      if (i < max) this.catchUpSession(id, report);
      else report.deferred += 1;
    });
    for (const a of agentId === null ? this.learningAgents() : [agentId]) this.catchUpLearnings(a, report);
    return report;
  }
}
