/**
 * read_session's reread: a bounded window of a session's log around one
 * event, read from the log itself (the truth; the index only pointed there).
 *
 * Contracts:
 * - Scope: a session outside the caller's scope (another agent's, unless
 *   the scope is the home) is answered exactly like a session that does not
 *   exist, so ids cannot be probed.
 * - Bounded: the log is streamed in chunks (SessionStore.readEvents with
 *   maxLines), keeping only the `before` events behind the reader; each
 *   event is shown up to WINDOW_EVENT_MAX characters. At most
 *   READ_SCAN_MAX_LINES lines are read per call: an event further in is
 *   answered with a not_found that says so, a window of the last events is
 *   the last of those lines (`truncated`).
 * - Redacted with the target session's secrets here; the caller's run
 *   redacts its own on top (the tool catalog).
 */
import { OpenboaError, notFound } from '../foundation/errors.js';
import { sessionRedactor } from '../run/environment.js';
import { START, type Cursor } from '../store/jsonl.js';
import type { SessionStore } from '../store/session-store.js';
import type { SessionEvent } from '../schema/index.js';
import { windowText } from './event-text.js';

export interface WindowRequest {
  sessionId: string;
  /** Center on this event; absent: the end of the log. */
  eventId?: string;
  before: number;
  after: number;
  /** Only this agent's sessions; null: any session in the home. */
  agentId: string | null;
}

export interface SessionWindow {
  sessionId: string;
  agentId: string;
  title: string | null;
  /** Events shown, in log order, each rendered (windowText). */
  events: string[];
  /** Whether the window starts at line 1 / ends at the log's last line. */
  atStart: boolean;
  atEnd: boolean;
  /** The scan stopped at READ_SCAN_MAX_LINES before the log's end: `atEnd` is about those lines only. */
  truncated: boolean;
}

const CHUNK = 1000;

/** The most log lines one read_session call reads (a few hundred ms for the longest logs). */
export const READ_SCAN_MAX_LINES = 50_000;

/** Throws not_found for a session that does not exist or is outside the scope (the same message), or for an event not in it. */
export function readSessionWindow(store: SessionStore, env: NodeJS.ProcessEnv, r: WindowRequest, maxLines = READ_SCAN_MAX_LINES): SessionWindow {
  const hidden = () => notFound(`session ${r.sessionId} not found among ${r.agentId === null ? "this home's sessions" : `agent ${r.agentId}'s sessions`}`);
  let snap;
  try {
    snap = store.snapshot(r.sessionId, { persist: false });
  } catch (e) {
    if (OpenboaError.is(e) && e.code === 'not_found') throw hidden();
    throw e;
  }
  if (r.agentId !== null && snap.agent_id !== r.agentId) throw hidden();
  const redactor = sessionRedactor(store.home, snap.environment_id, snap.overrides, env);

  const behind: Array<{ line: number; event: SessionEvent }> = [];
  const ahead: Array<{ line: number; event: SessionEvent }> = [];
  const keep = r.eventId === undefined ? r.before + r.after + 1 : r.before;
  let anchor: { line: number; event: SessionEvent } | null = null;
  let firstLine = 0;
  let atEnd = true;
  let cursor: Cursor = START;
  let truncated = false;
  const readTimes: { pending?: Map<string, string> } = {};
  outer: for (;;) {
    if (cursor.line >= maxLines) {
      truncated = true;
      break;
    }
    const batch = store.readEvents(r.sessionId, cursor, { maxLines: Math.min(CHUNK, maxLines - cursor.line), readTimes });
    cursor = batch.cursor;
    for (const l of batch.lines) {
      if (l.kind !== 'event') continue;
      if (firstLine === 0) firstLine = l.line;
      const item = { line: l.line, event: l.event };
      if (anchor) {
        if (ahead.length >= r.after) {
          atEnd = false;
          break outer;
        }
        ahead.push(item);
      } else if (r.eventId !== undefined && l.event.id === r.eventId) {
        anchor = item;
      } else {
        behind.push(item);
        if (behind.length > keep) behind.shift();
      }
    }
    if (batch.lines.length < Math.min(CHUNK, maxLines - (cursor.line - batch.lines.length))) break;
  }
  if (r.eventId !== undefined && !anchor) {
    throw notFound(truncated ? `event ${r.eventId} not found in the first ${maxLines} lines of session ${r.sessionId} (read_session reads no further)` : `event ${r.eventId} not found in session ${r.sessionId}`);
  }
  if (truncated) atEnd = false;
  const shown = [...behind, ...(anchor ? [anchor] : []), ...ahead];
  return {
    sessionId: r.sessionId,
    agentId: snap.agent_id,
    title: snap.title === null ? null : redactor.text(snap.title),
    events: shown.map((x) => windowText(x.line, x.event, redactor)),
    atStart: shown.length === 0 || shown[0]!.line === firstLine,
    atEnd,
    truncated,
  };
}
