/**
 * A session's log as a reader or writer first meets it: it must exist
 * (not_found otherwise), and be of a format this code reads (migrations.ts).
 * SessionStore checks every read and write through these; a one-shot
 * `openboa send` checks its append through them without loading the store.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Home, SessionPaths } from '../foundation/home.js';
import { notFound } from '../foundation/errors.js';
import { readFirstLine } from './jsonl.js';
import { logFormatOf } from './migrations.js';

/** The session's paths; throws not_found unless its log exists (and for an id that is not a UUIDv7). */
export function requireLog(home: Home, sessionId: string): SessionPaths {
  const p = home.session(sessionId);
  if (!fs.existsSync(p.events)) throw notFound(`session ${sessionId} not found (no ${path.relative(home.root, p.events)})`);
  return p;
}

/**
 * The format of the session's log, read from `file` (default: the log
 * itself; SessionStore.create reads its copy before it is renamed into
 * place); throws unsupported_log_format, naming the log, for one this code
 * does not read.
 */
export function logFormatAt(home: Home, sessionId: string, file = home.session(sessionId).events): number {
  return logFormatOf(readFirstLine(file), `session ${sessionId}'s log (${path.relative(home.root, home.session(sessionId).events)})`);
}
