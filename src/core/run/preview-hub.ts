/**
 * Reply previews across one process: runs publish the text their model is
 * streaming (preview-publisher.ts, an observer of every run), and whoever
 * shows a session live (the HTTP stream hub) watches that session. A run
 * and a watcher meet here only when they share a process: a run in another
 * process (a daemon beside `openboa serve`) is never heard.
 *
 * Contracts:
 * - Nothing is kept for a session nobody watches: watched() is one Map
 *   lookup, and a publisher asks it before doing any work; the last
 *   unwatch() removes the session's entry.
 * - Listeners of a session are called synchronously, in the order they
 *   watched; a listener must not throw (a throw is swallowed).
 * - What is published is redacted already (the run's redactor).
 */

/** One preview of an event a run is about to write (ids as the event will carry them). */
export type Preview =
  /** A block's preview opens: the event of `type` that will carry `eventId`. */
  | { kind: 'start'; runId: string; eventId: string; type: 'agent.message' | 'agent.thinking' }
  /** More text of agent.message `eventId` (its one text block). */
  | { kind: 'delta'; runId: string; eventId: string; text: string };

export type PreviewListener = (p: Preview) => void;

export class PreviewHub {
  private readonly watchers = new Map<string, Set<PreviewListener>>();

  /** Whether anyone watches session `id` now. */
  watched(id: string): boolean {
    return this.watchers.has(id);
  }

  /** Hears session `id`'s previews until the returned function is called (once is enough; more are harmless). */
  watch(id: string, listener: PreviewListener): () => void {
    let set = this.watchers.get(id);
    if (!set) this.watchers.set(id, (set = new Set()));
    set.add(listener);
    return () => {
      const s = this.watchers.get(id);
      if (!s || !s.delete(listener)) return;
      if (s.size === 0) this.watchers.delete(id);
    };
  }

  publish(id: string, p: Preview): void {
    const set = this.watchers.get(id);
    if (!set) return;
    for (const l of [...set]) {
      try {
        l(p);
      } catch {
        // a watcher's failure is its own
      }
    }
  }

  /** Sessions watched now (for tests). */
  get size(): number {
    return this.watchers.size;
  }
}

/** The process's hub: every run of this process publishes here. */
export const previewHub = new PreviewHub();
