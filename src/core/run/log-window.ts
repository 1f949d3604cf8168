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
 * replaced or truncated log is read afresh; the log stays the truth.
 */
import type { SessionStore } from '../store/session-store.js';
import { readLines, readLinesBefore, type Cursor, type RawLine } from '../store/jsonl.js';
import { parseEventLine } from '../store/parse-line.js';
import { ConversationBuilder, type LoggedEvent } from './conversation.js';

/** Recent events kept for runtime/event-feed.md and for finding a tool use by id. */
const RECENT = 256;
/**
 * Sessions whose folded window stays cached in this process (least recently
 * run dropped first). A window holds at most a context window's worth of
 * conversation (a few MB for a long session), so this bounds the memory.
 */
const CACHE_SESSIONS = 16;

interface Cached {
  ino: number;
  cursor: Cursor;
  builder: ConversationBuilder;
  recent: LoggedEvent[];
  fromStart: boolean;
  maxBytes: number;
  /** Builder size after the last trim check. */
  trimmedAt: number;
}

const cache = new Map<string, Cached>();

function remember(file: string, c: Cached) {
  cache.delete(file);
  cache.set(file, c);
  while (cache.size > CACHE_SESSIONS) cache.delete(cache.keys().next().value as string);
}

export class LogWindow {
  private c: Cached;

  constructor(
    private readonly store: SessionStore,
    private readonly sessionId: string,
    end: Cursor,
    maxBytes: number,
    private readonly now: () => number,
    /** Keep at most this many tokens of old conversation in memory between runs. */
    private readonly keepTokens = Math.ceil(maxBytes / 3),
  ) {
    const file = store.paths(sessionId).events;
    const hit = cache.get(file);
    if (hit && hit.ino === end.ino && hit.cursor.offset <= end.offset && hit.maxBytes === maxBytes) {
      this.c = hit;
    } else {
      const lines = readLinesBefore(file, end, maxBytes);
      this.c = { ino: end.ino, cursor: end, builder: new ConversationBuilder(), recent: [], fromStart: lines.length === 0 || lines[0]?.no === 1, maxBytes, trimmedAt: 0 };
      this.feed(lines);
    }
    remember(file, this.c);
    this.refresh();
  }

  get builder(): ConversationBuilder {
    return this.c.builder;
  }

  /** True when the window starts at line 1 (nothing was left out). */
  get fromStart(): boolean {
    return this.c.fromStart;
  }

  /** The newest events (up to RECENT), oldest first. */
  get recent(): readonly LoggedEvent[] {
    return this.c.recent;
  }

  /** Reads what was appended since the last read and folds it in. */
  refresh(): LoggedEvent[] {
    const r = readLines(this.store.paths(this.sessionId).events, this.c.cursor);
    if (r.reset) {
      // The file was replaced under us: start over from its tail.
      cache.delete(this.store.paths(this.sessionId).events);
      this.c.builder = new ConversationBuilder();
      this.c.recent = [];
      this.c.fromStart = true;
      this.c.trimmedAt = 0;
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
      const r = parseEventLine(raw, t);
      if (r.kind !== 'event') continue;
      this.c.builder.feed(r.line, r.event);
      added.push({ line: r.line, event: r.event });
    }
    if (added.length) {
      this.c.recent.push(...added);
      if (this.c.recent.length > RECENT) this.c.recent = this.c.recent.slice(-RECENT);
    }
    return added;
  }
}
