/**
 * The native half of the session watcher: plain `fs.watch` (one inotify
 * watch each) on `sessions/`, on every session folder and on its `inbox/`
 * when it has one (inbox/ is made on first use: most sessions never have
 * one, and cost one watch). Nothing else is kept per session: no per-file
 * records, no stat cache, no throttle (chokidar kept all three, and at
 * 10,000 sessions its bookkeeping was most of the daemon's memory).
 *
 * Contracts:
 * - `onHint(id)` for every raw event on a session's events.jsonl or
 *   wake-queue.jsonl, on a name in its inbox/ not starting with ".", on the
 *   creation of its inbox/, and for a session folder that appears. Events
 *   arrive as inotify reports them; the caller coalesces. An inbox/ made
 *   after its folder was watched is watched BEFORE that hint is given, so a
 *   file renamed in between (seen by no watch) is found by the look the
 *   hint asks for, and one renamed in after it by the new watch.
 * - `onGone(id)` when a session folder disappears from `sessions/`.
 * - A folder that vanishes between listing and watching is a normal race:
 *   skipped, the `sessions/` watch reports what happens next.
 * - Out of inotify watches (ENOSPC) or descriptors (EMFILE): the error is
 *   emitted as 'error' (the caller falls back to polling); nothing throws.
 * - The watches are persistent, like any handle of the daemon: they keep
 *   its process alive on their own. close() ends every one of them, stops a
 *   start still adding slices, and no watch is made after it (an event or a
 *   slice that arrives later adds nothing). A daemon whose stop is cut short
 *   is ended by the CLI's exit after an abort, not by unref'd handles.
 * - 'ready' is emitted once every folder listed at start is watched, never
 *   synchronously from start() and never after close() or a failure. The
 *   session folders are listed and watched in slices on later turns of the
 *   event loop (start() itself only watches `sessions/`), waiting for
 *   `nextTurn` between slices, so starting with 10,000 sessions does not
 *   hold up runs.
 */
import { EventEmitter } from 'node:events';
import fs from 'node:fs';
import path from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { UUID_V7 } from '../core/schema/index.js';

export interface FolderWatchesOptions {
  sessionsDir: string;
  onHint: (sessionId: string) => void;
  onGone: (sessionId: string) => void;
  /** Awaited before each slice of the start's watches: the next turn of the event loop by default (the daemon's gives way to runs that are starting). */
  nextTurn?: () => Promise<void>;
}

const JOURNALS = new Set(['events.jsonl', 'wake-queue.jsonl']);
const INBOX = 'inbox';
/** Watches added per turn of the event loop while starting. */
const SLICE = 512;

interface SessionWatch {
  id: string;
  folder: fs.FSWatcher;
  inbox: fs.FSWatcher | null;
}

/** Every watch's 'error' listener: a watched folder that is deleted ends its watch (the sessions/ watch reports the removal). */
function closeOnError(this: fs.FSWatcher): void {
  this.close();
}

export class FolderWatches extends EventEmitter {
  private root: fs.FSWatcher | null = null;
  private readonly sessions = new Map<string, SessionWatch>();
  /**
   * Each session watch's session. Every watch shares one 'change' listener
   * (onChange) and one 'error' listener, which find their session here:
   * three closures of its own per watch, with their contexts, were about
   * 2 MB of heap at 10,000 sessions.
   */
  private readonly owners = new WeakMap<fs.FSWatcher, SessionWatch>();
  private readonly onChange: (this: fs.FSWatcher, event: string, name: string | Buffer | null) => void;
  private closed = false;
  /** Out of watches: no more are tried (the caller switches to polling). */
  private failed = false;

  constructor(private readonly o: FolderWatchesOptions) {
    super();
    const self = this; // the listener's own `this` is the watcher
    this.onChange = function (this: fs.FSWatcher, _event, name) {
      self.onWatchEvent(this, name === null ? null : String(name));
    };
  }

  /** Watches `sessions/` now, then every session folder in it on later turns; emits 'ready' when done. */
  start(): void {
    this.root = this.watch(this.o.sessionsDir);
    if (this.root) void this.addAll();
  }

  private async addAll(): Promise<void> {
    const next = this.o.nextTurn ?? nextTurn;
    await next();
    if (this.closed || this.failed) return;
    let names: string[];
    try {
      names = fs.readdirSync(this.o.sessionsDir);
    } catch (e) {
      this.fail(e as NodeJS.ErrnoException);
      return;
    }
    const ids = names.filter((n) => UUID_V7.test(n));
    for (let from = 0; from < ids.length; from += SLICE) {
      if (from > 0) await next();
      for (let i = from; i < Math.min(ids.length, from + SLICE); i++) {
        if (this.closed || this.failed) return;
        this.add(ids[i] as string);
      }
    }
    if (!this.closed && !this.failed) this.emit('ready');
  }

  /** How many inotify watches are held (for tests and the operator). */
  get watches(): number {
    let n = this.root ? 1 : 0;
    for (const w of this.sessions.values()) n += w.inbox ? 2 : 1;
    return n;
  }

  /** Ends every watch now (the promise is for symmetry with chokidar's close). */
  async close(): Promise<void> {
    this.closed = true;
    this.root?.close();
    this.root = null;
    for (const w of this.sessions.values()) {
      w.folder.close();
      w.inbox?.close();
    }
    this.sessions.clear();
  }

  /** A name in `sessions/` changed: a session folder came or went. */
  private onRootEvent(name: string) {
    if (!UUID_V7.test(name)) return;
    if (fs.existsSync(path.join(this.o.sessionsDir, name))) {
      this.add(name);
      this.o.onHint(name);
    } else {
      this.drop(name);
      this.o.onGone(name);
    }
  }

  /** Watches a session folder (and its inbox/) unless it is already watched. */
  private add(id: string): void {
    if (this.sessions.has(id)) return;
    const folder = this.watch(path.join(this.o.sessionsDir, id));
    if (!folder) return;
    const w: SessionWatch = { id, folder, inbox: null };
    this.owners.set(folder, w);
    this.sessions.set(id, w);
    this.watchInbox(w);
  }

  /**
   * Watches the session's inbox/ if it has one. Looked for first: most
   * sessions have none, and a failed fs.watch is not free (10,000 of them
   * at a start left about 7 MB more resident, heap that V8 kept). The folder is
   * watched before this runs, so an inbox/ made after the look is reported
   * by the folder's watch, and watched then.
   */
  private watchInbox(w: SessionWatch) {
    w.inbox?.close();
    w.inbox = null;
    const dir = path.join(this.o.sessionsDir, w.id, INBOX);
    if (!fs.existsSync(dir)) return;
    w.inbox = this.watch(dir);
    if (w.inbox) this.owners.set(w.inbox, w);
  }

  /** Every watch's 'change': `watcher` says which folder it is. */
  private onWatchEvent(watcher: fs.FSWatcher, name: string | null) {
    if (this.closed || !name) return;
    if (watcher === this.root) return this.onRootEvent(name);
    const w = this.owners.get(watcher);
    // A watch replaced or dropped since (its last events may still come): not a hint.
    if (!w || this.sessions.get(w.id) !== w) return;
    if (watcher === w.inbox) {
      if (!name.startsWith('.')) this.o.onHint(w.id);
    } else if (watcher === w.folder) {
      this.onSessionEvent(w, name);
    }
  }

  private onSessionEvent(w: SessionWatch, name: string) {
    if (JOURNALS.has(name)) {
      this.o.onHint(w.id);
    } else if (name === INBOX) {
      // inbox/ made (or replaced) after the folder was watched: watch the new one, then hint (the contract's order).
      this.watchInbox(w);
      this.o.onHint(w.id);
    }
  }

  private drop(id: string) {
    const w = this.sessions.get(id);
    if (!w) return;
    w.folder.close();
    w.inbox?.close();
    this.sessions.delete(id);
  }

  /** fs.watch with the shared listeners, with a vanished folder as null and running out of watches as an 'error'. */
  private watch(dir: string): fs.FSWatcher | null {
    if (this.closed || this.failed) return null;
    try {
      const w = fs.watch(dir, this.onChange);
      w.on('error', closeOnError);
      return w;
    } catch (e) {
      const err = e as NodeJS.ErrnoException;
      if (err.code === 'ENOENT' || err.code === 'ENOTDIR') return null;
      this.fail(err);
      return null;
    }
  }

  private fail(err: NodeJS.ErrnoException) {
    if (this.failed) return;
    this.failed = true;
    // Emitted on the next tick, so a caller that has just called start() has its listener in place.
    process.nextTick(() => this.emit('error', err));
  }
}
