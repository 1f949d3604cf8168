/**
 * What decides whether a person's event will be taken in soon (the notes of
 * `send` and `outcome`, src/cli/why-it-waits.ts): whether the session is
 * terminated, archived, paused, or waits on answers. From a snapshot
 * (waitStateOf), or read cheaply from session.json (peekWaitState) by a
 * process that should not load the schema and the fold for it.
 */
import fs from 'node:fs';
import type { SessionSnapshot } from '../schema/index.js';
import type { SessionPaths } from '../foundation/home.js';
import { SESSION_FORMAT } from '../schema/format-constants.js';
import { migrateEvent } from './migrations.js';

export interface WaitState {
  terminated: boolean;
  archivedAt: string | null;
  paused: { since: string; reason: string | null } | null;
  /** Tool uses that wait on a person's answer (counts.requires_action). */
  requiresAction: number;
}

export function waitStateOf(s: SessionSnapshot): WaitState {
  return {
    terminated: s.status === 'terminated',
    archivedAt: s.archived_at,
    paused: s.paused && { since: s.paused.since, reason: s.paused.reason },
    requiresAction: s.counts.requires_action,
  };
}

/**
 * How many bytes of log after session.json's cursor peekWaitState reads
 * before it leaves the question to the fold. Sends with no run between them
 * add one line each (about 200 bytes); a fold (any snapshot read, which
 * every other command does) moves the cursor up again.
 */
const MAX_TAIL_BYTES = 64 * 1024;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const nullOr = <T>(v: unknown, is: (x: unknown) => x is T): v is T | null => v === null || is(v);
const isString = (v: unknown): v is string => typeof v === 'string';

/**
 * waitStateOf(the session's snapshot now), read from session.json without
 * folding, or null when that cannot be told so: session.json is missing,
 * unreadable, of another session or format, or the log after its cursor
 * (another file, shorter, more than MAX_TAIL_BYTES, an unfinished line)
 * holds a line that is not a user.message. A user.message changes none of
 * the four fields (fold.ts: it becomes pending, or is refused), so
 * session.json plus such lines says what a fold would. The wake queue
 * changes none of them either.
 */
export function peekWaitState(p: Pick<SessionPaths, 'snapshot' | 'events'>, sessionId: string): WaitState | null {
  let s: unknown;
  try {
    s = JSON.parse(fs.readFileSync(p.snapshot, 'utf8'));
  } catch {
    return null;
  }
  if (!isObject(s) || s.id !== sessionId || s.format !== SESSION_FORMAT || typeof s.log_format !== 'number') return null;
  const { status, archived_at: archivedAt, paused, counts, journals } = s;
  if (!isString(status) || !nullOr(archivedAt, isString) || !isObject(counts) || typeof counts.requires_action !== 'number') return null;
  let pausedState: WaitState['paused'] = null;
  if (paused !== null) {
    if (!isObject(paused) || !isString(paused.since) || !nullOr(paused.reason, isString)) return null;
    pausedState = { since: paused.since, reason: paused.reason };
  }
  const cursor = isObject(journals) && isObject(journals.events) ? journals.events : null;
  if (!cursor || typeof cursor.offset !== 'number' || typeof cursor.ino !== 'number' || typeof cursor.line !== 'number' || cursor.line < 1) return null;
  if (!onlyMessagesAfter(p.events, cursor.offset, cursor.ino, s.log_format)) return null;
  return {
    terminated: status === 'terminated',
    archivedAt,
    paused: pausedState,
    requiresAction: counts.requires_action,
  };
}

/** Whether every line of `file` after byte `offset` is a user.message (in the log's `format`), read whole. */
function onlyMessagesAfter(file: string, offset: number, ino: number, format: number): boolean {
  let tail: string;
  try {
    const fd = fs.openSync(file, 'r');
    try {
      const st = fs.fstatSync(fd);
      const size = st.size - offset;
      if (st.ino !== ino || size < 0 || size > MAX_TAIL_BYTES) return false;
      const buf = Buffer.alloc(size);
      let got = 0;
      while (got < size) {
        const n = fs.readSync(fd, buf, got, size - got, offset + got);
        if (n === 0) return false;
        got += n;
      }
      tail = buf.toString('utf8');
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return false;
  }
  if (tail !== '' && !tail.endsWith('\n')) return false;
  for (const line of tail.split('\n')) {
    if (line.trim() === '') continue;
    let e: unknown;
    try {
      e = JSON.parse(line);
    } catch {
      return false;
    }
    if (!isObject(e) || migrateEvent(e, format).type !== 'user.message') return false;
  }
  return true;
}
