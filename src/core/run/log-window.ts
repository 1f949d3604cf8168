/**
 * The part of a session's log a run reads: the tail that can matter for the
 * model's context window, kept current as the run appends to it, folded into
 * a ConversationBuilder.
 *
 * Reading a long log must cost what is new, not what is old. So only the
 * tail is read (about 6 bytes per token of the context window), and the
 * folded window is kept in a small per-process cache (the daemon is a long
 * process): the next run of the same session reads only the lines appended
 * since. The cache is checked against the file's inode and size, so a
 * replaced or truncated log is read afresh; the log stays the truth. After a
 * compaction that left turns out, a window read afresh goes back only to the
 * request before the kept turns (tailFrom), so a restarted daemon does not
 * read again what the summary stands for.
 *
 * A session.status_running in the window may take in events whose lines lie
 * before it (a burst of messages larger than the tail, or a message followed
 * by a long stretch of other lines). The window reads further back for them,
 * up to lookbackBytes() before its first line, and folds in only those events;
 * an event not found within that bound enters the conversation as a note
 * naming its id (and its line, when the id says it). So every event a run
 * takes in reaches the builder, whole or named.
 */
import type { SessionStore } from '../store/session-store.js';
import type { Cursor, RawLine } from '../store/jsonl.js';
import { parseEventLine } from '../store/parse-line.js';
import { isUserEventType, type SessionEvent, type SessionSnapshot } from '../schema/index.js';
import { ConversationBuilder, type LoggedEvent } from './conversation.js';

/** Recent events kept for runtime/event-feed.md and for finding a tool use by id. */
const RECENT = 256;
/**
 * Sessions whose folded window stays cached in this process (least recently
 * run dropped first). A window holds at most a context window's worth of
 * conversation (a few MB for a long session), so this bounds the memory.
 */
const CACHE_SESSIONS = 16;

/**
 * How far before its first line the window looks for events a run took in:
 * 16 tails' worth, and at least 8 MiB (so a small window still finds a burst
 * of a few MB). Bounded so that a run never reads a whole long log; found
 * events are kept whole, so this also bounds what they add to memory.
 */
export const lookbackBytes = (maxBytes: number) => Math.max(16 * maxBytes, 8 * 1024 * 1024);
/** Bytes read per step backwards (then on to a line boundary). */
const LOOKBACK_STEP = 1024 * 1024;
const LINE_ID = /^sevt_line_(\d+)$/;

interface Cached {
  ino: number;
  cursor: Cursor;
  builder: ConversationBuilder;
  recent: LoggedEvent[];
  fromStart: boolean;
  maxBytes: number;
  /** Builder size after the last trim check. */
  trimmedAt: number;
  /** Where the tail read began: the offset of its first line and the lines before it. */
  head: { offset: number; line: number };
  /** Events read from before `head` because a status_running in the window took them in. */
  takenBefore: number;
}

const cache = new Map<string, Cached>();

function remember(file: string, c: Cached) {
  cache.delete(file);
  cache.set(file, c);
  while (cache.size > CACHE_SESSIONS) cache.delete(cache.keys().next().value as string);
}

/** Forgets every cached window: the next run of each session reads its log afresh, as a restarted daemon does. */
export function forgetCachedWindows(): void {
  cache.clear();
}

export class LogWindow {
  private c: Cached;

  private refused: ReadonlySet<number>;

  /** The log's format (its first line's): every line read is brought up from it to the current one. */
  private readonly format: number;

  /**
   * `snap` is the run's snapshot: the window reads up to its cursor, and
   * skips every line its fold refused (see refresh()).
   */
  constructor(
    private readonly store: SessionStore,
    private readonly sessionId: string,
    snap: SessionSnapshot,
    maxBytes: number,
    private readonly now: () => number,
    /** Keep at most this many tokens of old conversation in memory between runs. */
    private readonly keepTokens = Math.ceil(maxBytes / 3),
  ) {
    const end = snap.journals.events;
    this.refused = refusedLines(snap);
    this.format = store.logFormat(sessionId);
    const file = store.paths(sessionId).events;
    const hit = cache.get(file);
    if (hit && hit.ino === end.ino && hit.cursor.offset <= end.offset && hit.maxBytes === maxBytes) {
      this.c = hit;
    } else {
      const kept = snap.compaction?.kept_from_line;
      const before = (at: Cursor, min: number) => store.readRawBefore(sessionId, at, min);
      const lines = (kept !== undefined && !this.refused.has(snap.compaction!.line) && tailFrom(before, end, maxBytes, kept, this.refused)) || before(end, maxBytes);
      const tailBytes = lines.reduce((a, l) => a + l.bytes + 1, 0);
      const head = { offset: end.offset - tailBytes, line: end.line - lines.length };
      this.c = { ino: end.ino, cursor: end, builder: new ConversationBuilder(), recent: [], fromStart: head.offset === 0, maxBytes, trimmedAt: 0, head, takenBefore: 0 };
      this.seedCompaction(snap);
      this.feed(lines);
    }
    remember(file, this.c);
    this.refresh(snap);
  }

  get builder(): ConversationBuilder {
    return this.c.builder;
  }

  /** True when the window starts at line 1 (nothing was left out). */
  get fromStart(): boolean {
    return this.c.fromStart;
  }

  /** The first line of the tail the window read (events before it are read only when a run took them in). */
  get firstLine(): number {
    return this.c.head.line + 1;
  }

  /** Events a status_running in the window took in whose lines lie before the window, read back for it. */
  get takenInBeforeWindow(): number {
    return this.c.takenBefore;
  }

  /** The newest events (up to RECENT), oldest first. */
  get recent(): readonly LoggedEvent[] {
    return this.c.recent;
  }

  /**
   * Reads what was appended since the last read, up to `snap`'s cursor, and
   * folds it in. Lines the fold refused (bad lines, and runtime-only lines
   * without a run's provenance: docs/format.md) never enter the
   * conversation; reading no further than the fold did means no line enters
   * before the fold has judged it.
   */
  refresh(snap: SessionSnapshot): LoggedEvent[] {
    this.refused = refusedLines(snap);
    const r = this.store.readRaw(this.sessionId, this.c.cursor, { until: snap.journals.events.offset });
    if (r.reset) {
      // The file was replaced under us: start over from its tail.
      cache.delete(this.store.paths(this.sessionId).events);
      this.c.builder = new ConversationBuilder();
      this.c.recent = [];
      this.c.fromStart = true;
      this.c.trimmedAt = 0;
      this.c.head = { offset: 0, line: 0 };
      this.c.takenBefore = 0;
    }
    this.c.cursor = r.cursor;
    this.c.ino = r.cursor.ino;
    const added = this.feed(r.lines);
    // Bound what a long-lived process keeps; checked every 256 new messages.
    if (this.c.builder.size >= this.c.trimmedAt + 256) {
      this.c.builder.trim(this.keepTokens);
      this.c.trimmedAt = this.c.builder.size;
    }
    return added;
  }

  private feed(lines: RawLine[]): LoggedEvent[] {
    const added: LoggedEvent[] = [];
    const t = this.now();
    for (const raw of lines) {
      if (this.refused.has(raw.no)) continue;
      const r = parseEventLine(raw, t, this.format);
      if (r.kind === 'event') added.push({ line: r.line, event: r.event });
    }
    if (!this.c.fromStart) this.readBackFor(missingBefore(added, this.c.builder));
    for (const { line, event } of added) this.c.builder.feed(line, event);
    // concat, not push(...added): a spread of a very long batch would overflow the call stack.
    if (added.length) this.c.recent = this.c.recent.concat(added.length > RECENT ? added.slice(-RECENT) : added).slice(-RECENT);
    return added;
  }

  /**
   * The latest compaction opens the conversation (its summary stands for
   * every turn before it): when its line lies before the tail this window
   * reads, it is read alone, by its offset, and fed first.
   */
  private seedCompaction(snap: SessionSnapshot) {
    const at = snap.compaction;
    if (!at || at.line > this.c.head.line || this.refused.has(at.line)) return;
    try {
      const r = this.store.readRaw(this.sessionId, { offset: at.offset, line: at.line - 1, ino: this.c.ino }, { maxLines: 1 });
      const raw = r.reset ? undefined : r.lines[0];
      if (!raw) return;
      const parsed = parseEventLine(raw, this.now(), this.format);
      if (parsed.kind === 'event' && parsed.event.id === at.event_id && parsed.event.type === 'agent.thread_context_compacted') this.c.builder.feed(parsed.line, parsed.event);
    } catch {
      // The file changed under us: the window goes on without it (the next compaction summarizes what it sees).
    }
  }

  /**
   * Finds the events with these ids before the window's first line, reading
   * backwards at most lookbackBytes, and folds them into the builder (they
   * precede every line of the window, so feeding them first keeps log order).
   * Ids not found are registered as notes. Reads only; a read that fails
   * (the file was replaced meanwhile) leaves the rest not found.
   */
  private readBackFor(wanted: Set<string>) {
    if (wanted.size === 0) return;
    const bound = lookbackBytes(this.c.maxBytes);
    const lines = new Set<number>(); // lines named by ids of the form sevt_line_<N>
    for (const id of wanted) {
      const m = LINE_ID.exec(id);
      if (m) lines.add(Number(m[1]));
    }
    const found: LoggedEvent[] = [];
    let at: Cursor = { offset: this.c.head.offset, line: this.c.head.line, ino: this.c.ino };
    let read = 0;
    const t = this.now();
    try {
      while (wanted.size > 0 && at.offset > 0 && read < bound) {
        const chunk = this.store.readRawBefore(this.sessionId, at, Math.min(LOOKBACK_STEP, bound - read));
        if (chunk.length === 0) break;
        const bytes = chunk.reduce((a, l) => a + l.bytes + 1, 0);
        for (const raw of chunk) {
          // Cheap test first: only a wanted line, or one with an "id" that is wanted, is parsed.
          if (!lines.has(raw.no) && !namesAny(raw.text, wanted)) continue;
          const r = parseEventLine(raw, t, this.format);
          if (r.kind !== 'event' || !wanted.has(r.event.id) || !isUserEvent(r.event)) continue;
          wanted.delete(r.event.id);
          found.push({ line: r.line, event: r.event });
        }
        at = { offset: at.offset - bytes, line: at.line - chunk.length, ino: at.ino };
        read += bytes;
      }
    } catch {
      // The file changed under us; what was not found is named below.
    }
    found.sort((a, b) => a.line - b.line);
    for (const { line, event } of found) this.c.builder.feed(line, event);
    this.c.takenBefore += found.length;
    const mb = Math.round(bound / (1024 * 1024));
    for (const id of wanted) {
      const m = LINE_ID.exec(id);
      this.c.builder.noteUnread(id, m ? Number(m[1]) : null, `its line lies more than ${mb} MB before the part of the log this run read`);
    }
  }
}

const isUserEvent = (e: SessionEvent) => isUserEventType(e.type);

/** Bytes of the first step of tailFrom (doubled at each further step). */
const TAIL_FROM_STEP = 16 * 1024;
const REQUEST_START = '"type":"span.model_request_start"';

/**
 * The tail of a compacted log, read back only as far as the kept turns need:
 * to the latest `span.model_request_start` before `keptFrom` (a user turn
 * gathers what came since the request before it, so the first kept turn is
 * rebuilt whole; what lies before it the compaction leaves out). Read in
 * doubling steps; null when that point is not within `maxBytes`, and the
 * caller reads the plain tail, as it would without a compaction (a line
 * the fold refused is no such point). A run
 * after a restart so reads what the window holds, not a window's worth of
 * bytes. Events the kept turns took in from further back are found by
 * readBackFor, as for any tail.
 */
function tailFrom(before: (at: Cursor, minBytes: number) => RawLine[], end: Cursor, maxBytes: number, keptFrom: number, refused: ReadonlySet<number>): RawLine[] | null {
  let out: RawLine[] = [];
  let at = end;
  let bytes = 0;
  for (let step = TAIL_FROM_STEP; at.offset > 0 && bytes < maxBytes; step *= 2) {
    const chunk = before(at, Math.min(step, maxBytes - bytes));
    if (chunk.length === 0) return null;
    out = chunk.concat(out);
    at = { offset: at.offset - chunk.reduce((a, l) => a + l.bytes + 1, 0), line: at.line - chunk.length, ino: at.ino };
    bytes = end.offset - at.offset;
    for (let i = chunk.length - 1; i >= 0; i--) {
      const l = chunk[i]!;
      if (l.no < keptFrom && !refused.has(l.no) && l.text.includes(REQUEST_START)) return out.slice(i);
    }
  }
  return at.offset === 0 ? out : null;
}

/** Lines of events.jsonl the snapshot's fold refused: not yet reported, or reported. */
function refusedLines(s: SessionSnapshot): Set<number> {
  const out = new Set<number>();
  for (const r of s.rejected) if (r.file === 'events.jsonl') out.add(r.line);
  for (const k of s.reported) if (k.startsWith('events.jsonl:')) out.add(Number(k.slice(13)));
  return out;
}

/**
 * Whether a raw line has an `"id": "<wanted>"` pair anywhere (cost linear in
 * the line, whatever the number of ids). An id written with JSON escapes is
 * not recognised; such an event is named instead of read.
 */
function namesAny(text: string, wanted: ReadonlySet<string>): boolean {
  ID_PAIR.lastIndex = 0;
  for (let m = ID_PAIR.exec(text); m; m = ID_PAIR.exec(text)) if (wanted.has(m[1] as string)) return true;
  return false;
}
const ID_PAIR = /"id"\s*:\s*"([^"\\]*)"/g;

/**
 * Ids that a session.status_running among `events` takes in but that neither
 * the builder knows nor an earlier event of `events` defines: they lie before
 * the window.
 */
function missingBefore(events: readonly LoggedEvent[], builder: ConversationBuilder): Set<string> {
  const defined = new Set<string>();
  const missing = new Set<string>();
  for (const { event } of events) {
    if (isUserEvent(event)) defined.add(event.id);
    else if (event.type === 'session.status_running') {
      for (const id of event.processed_event_ids) if (!defined.has(id) && !builder.knows(id)) missing.add(id);
    }
  }
  return missing;
}
