/**
 * The search index's database: `<home>/.openboa/search.sqlite`, SQLite with
 * FTS5 through better-sqlite3 (docs/memory.md, "Search"). Derived state only: every
 * row comes from a session's events.jsonl or an agent's learnings.jsonl, so
 * deleting the file (or the whole `.openboa/`) loses nothing; the next
 * search or daemon start rebuilds it.
 *
 * Tables:
 * - `sessions`: one row per indexed log: its agent, title, environment and
 *   overrides (for redaction), and the cursor the log was read up to.
 * - `learning_journals`: the cursor of each agent's learnings.jsonl.
 * - `docs`: one row per indexed text (an event's text, or a learning),
 *   holding the text once; `fts` is an external-content FTS5 index over it,
 *   kept in step by triggers. `scope` is one token naming the agent, so an
 *   agent-scoped query intersects posting lists instead of filtering rows.
 *
 * Contracts:
 * - WAL mode: readers (the CLI, tools) never wait for the writer.
 * - A schema of another version, or a file that is not a database, is
 *   dropped and made again (it is derived); nothing else is ever deleted.
 *   Tables are dropped only in a database whose `meta` says it is ours; any
 *   other database (or a symlink, or anything not a regular file) at the
 *   index's path is removed and ours made in its place, never altered.
 * - `.openboa/` is made 0700 and the index 0600 (it holds the conversations).
 * - Two writers (the daemon's indexer, a CLI or a tool catching up) are
 *   serialised by SQLite's write lock: every change is a `BEGIN IMMEDIATE`
 *   transaction that reads its cursor inside the lock (search-indexer.ts).
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { Home } from '../foundation/home.js';

export type SearchDb = Database.Database;

/** Bump when the tables change: an index of another version is rebuilt. */
export const SEARCH_SCHEMA_VERSION = 1;

/**
 * How long a statement waits for another process's write lock before
 * SQLITE_BUSY, ms. better-sqlite3 waits synchronously, blocking the whole
 * process: the CLI may wait (BUSY_TIMEOUT_MS); the daemon and the tools
 * (inside the daemon's event loop) wait briefly and retry later
 * (SHORT_BUSY_TIMEOUT_MS).
 */
export const BUSY_TIMEOUT_MS = 2000;
export const SHORT_BUSY_TIMEOUT_MS = 50;

/** What `meta.format` holds in our index: a database without it is not ours and is never altered, only replaced. */
const FORMAT = 'openboa-search';

export function searchDbFile(home: Home): string {
  return path.join(home.root, '.openboa', 'search.sqlite');
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS sessions (
  session_id TEXT PRIMARY KEY,
  agent_id TEXT NOT NULL,
  environment_id TEXT,
  overrides TEXT,
  title TEXT,
  created_at TEXT,
  cur_offset INTEGER NOT NULL,
  cur_line INTEGER NOT NULL,
  cur_ino INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS learning_journals (
  agent_id TEXT PRIMARY KEY,
  cur_offset INTEGER NOT NULL,
  cur_line INTEGER NOT NULL,
  cur_ino INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS docs (
  id INTEGER PRIMARY KEY,
  body TEXT NOT NULL,
  scope TEXT NOT NULL,
  session_id TEXT NOT NULL,
  agent_id TEXT NOT NULL,
  event_id TEXT NOT NULL,
  kind TEXT NOT NULL,
  created_at TEXT NOT NULL,
  line INTEGER NOT NULL,
  source TEXT NOT NULL,
  learning_id TEXT,
  learning_key TEXT
);
CREATE INDEX IF NOT EXISTS docs_source ON docs(source);
CREATE INDEX IF NOT EXISTS docs_learning ON docs(source, learning_key) WHERE learning_key IS NOT NULL;
CREATE INDEX IF NOT EXISTS docs_learning_id ON docs(source, learning_id) WHERE learning_id IS NOT NULL;
CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(body, scope, content='docs', content_rowid='id', tokenize='unicode61 remove_diacritics 2');
CREATE TRIGGER IF NOT EXISTS docs_ai AFTER INSERT ON docs BEGIN
  INSERT INTO fts(rowid, body, scope) VALUES (new.id, new.body, new.scope);
END;
CREATE TRIGGER IF NOT EXISTS docs_ad AFTER DELETE ON docs BEGIN
  INSERT INTO fts(fts, rowid, body, scope) VALUES ('delete', old.id, old.body, old.scope);
END;
`;

const DROP = `
DROP TRIGGER IF EXISTS docs_ai;
DROP TRIGGER IF EXISTS docs_ad;
DROP TABLE IF EXISTS fts;
DROP TABLE IF EXISTS docs;
DROP TABLE IF EXISTS sessions;
DROP TABLE IF EXISTS learning_journals;
DROP TABLE IF EXISTS meta;
`;

/** The scope token of an agent: one FTS token (hex), so "a-b" never matches inside "a-b-c". */
export function scopeToken(agentId: string): string {
  return `a${Buffer.from(agentId, 'utf8').toString('hex')}`;
}

function createSchema(db: SearchDb) {
  db.exec(SCHEMA);
  // Column weights: the body counts, the scope token not at all.
  db.prepare(`INSERT INTO fts(fts, rank) VALUES ('rank', 'bm25(1.0, 0.0)')`).run();
  db.prepare(`INSERT OR REPLACE INTO meta(key, value) VALUES ('schema_version', ?)`).run(String(SEARCH_SCHEMA_VERSION));
  db.prepare(`INSERT OR REPLACE INTO meta(key, value) VALUES ('format', ?)`).run(FORMAT);
}

/** Drops every table and makes them again, in one transaction (`openboa reindex`, a schema of another version). */
export function resetSchema(db: SearchDb): void {
  db.transaction(() => {
    db.exec(DROP);
    createSchema(db);
  }).immediate();
}

/** Our schema's version; null for an empty database; 'foreign' for a database that is not ours. */
function versionOf(db: SearchDb): number | null | 'foreign' {
  const tables = db.prepare(`SELECT name FROM sqlite_master`).all() as Array<{ name: string }>;
  if (tables.length === 0) return null;
  if (!tables.some((t) => t.name === 'meta')) return 'foreign';
  let rows: Array<{ key: unknown; value: unknown }>;
  try {
    rows = db.prepare(`SELECT key, value FROM meta WHERE key IN ('format', 'schema_version')`).all() as typeof rows;
  } catch {
    return 'foreign'; // a `meta` table of other columns
  }
  const get = (k: string) => rows.find((r) => r.key === k)?.value;
  if (get('format') !== FORMAT) return 'foreign';
  return Number(get('schema_version'));
}

/** A database at our path that is not ours: removed, never altered. */
class ForeignDatabase extends Error {
  readonly code = 'SQLITE_NOTADB';
}

/**
 * Makes sure `file` is a regular file of ours before SQLite opens it: a
 * symlink (never followed: O_NOFOLLOW) or anything not a regular file is
 * removed, and the file is created 0600 (an existing one is made 0600).
 */
function claimFile(file: string): void {
  for (let tries = 0; ; tries++) {
    let fd: number;
    try {
      fd = fs.openSync(file, fs.constants.O_RDWR | fs.constants.O_CREAT | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK, 0o600);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (tries < 3 && (code === 'ELOOP' || code === 'EISDIR' || code === 'ENXIO')) {
        fs.rmSync(file, { recursive: true, force: true });
        continue;
      }
      throw e;
    }
    try {
      const st = fs.fstatSync(fd);
      if (!st.isFile()) {
        if (tries >= 3) throw new Error(`${file} is not a regular file`);
        fs.rmSync(file, { force: true });
        continue;
      }
      if ((st.mode & 0o777) !== 0o600) fs.fchmodSync(fd, 0o600);
      return;
    } finally {
      fs.closeSync(fd);
    }
  }
}

function openFile(file: string, busyMs: number): SearchDb {
  claimFile(file);
  const db = new Database(file);
  db.pragma(`busy_timeout = ${busyMs}`);
  db.pragma('journal_mode = WAL');
  // Derived state: a power loss may lose the last commits, never corrupt (WAL); the cursors go with the rows.
  db.pragma('synchronous = NORMAL');
  return db;
}

function isNotADatabase(e: unknown): boolean {
  const code = (e as { code?: string }).code;
  return e instanceof ForeignDatabase || code === 'SQLITE_NOTADB' || code === 'SQLITE_CORRUPT';
}

/**
 * Opens (creating) the index at `file`. A file that is not an index of this
 * version is made again: a corrupt or foreign file is removed (with its WAL),
 * a schema of another version dropped. Throws only for what a rebuild cannot
 * fix (no permission, a full disk).
 */
export function openSearchDb(file: string, opts: { /** SQLITE_BUSY after this long waiting for another writer, ms. */ busyMs?: number } = {}): SearchDb {
  const busyMs = opts.busyMs ?? BUSY_TIMEOUT_MS;
  const dir = path.dirname(file);
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const dst = fs.lstatSync(dir);
  if (!dst.isDirectory()) throw new Error(`${dir} is not a directory (a symlink or a file): remove it, and the search index is made again`);
  if ((dst.mode & 0o777) !== 0o700) fs.chmodSync(dir, 0o700);
  let db: SearchDb | null = null;
  try {
    db = openFile(file, busyMs);
    prepareSchema(db);
    return db;
  } catch (e) {
    db?.close();
    if (!isNotADatabase(e)) throw e;
  }
  for (const f of [file, `${file}-wal`, `${file}-shm`]) fs.rmSync(f, { force: true });
  db = openFile(file, busyMs);
  prepareSchema(db);
  return db;
}

function prepareSchema(db: SearchDb) {
  if (versionOf(db) === SEARCH_SCHEMA_VERSION) return;
  db.transaction(() => {
    // Looked at again under the write lock: another process may have made it meanwhile.
    const v = versionOf(db);
    if (v === SEARCH_SCHEMA_VERSION) return;
    if (v === 'foreign') throw new ForeignDatabase('not a search index of openboa');
    if (v !== null) db.exec(DROP);
    createSchema(db);
  }).immediate();
}
