/**
 * Which sessions to look at first when the daemon starts, so a session with
 * work runs within moments of the start whatever the number of sessions on
 * disk (the full discovery scan folds every session and takes seconds at
 * 10,000).
 *
 * `<home>/.openboa/work-index.json` lists the sessions the daemon last knew
 * to have something to do: work now, or a revisit or retry due at a time. It
 * is derived, never the truth: written (temp + rename, not fsynced) a moment
 * after it changes and when the daemon stops; a missing, stale or unreadable
 * index costs only order, since the scan still looks at every session. It
 * holds nothing for idle sessions.
 *
 * Start order (discoveryOrder): the indexed sessions (soonest due first),
 * then every other session newest-modified first (its events.jsonl), so a
 * message appended while the daemon was down is found at once without any
 * index; sessions the index names but that are gone are skipped.
 */
import fs from 'node:fs';
import path from 'node:path';
import * as z from 'zod';
import type { Clock } from '../core/foundation/clock.js';
import type { Home } from '../core/foundation/home.js';
import { writeJsonAtomic } from '../core/store/atomic-file.js';

const IndexFile = z.object({
  format: z.literal(1),
  /** Session id → when it has something to do (ms since the epoch; 0: now). */
  due: z.record(z.string(), z.number()),
});

/** How long after a change the index is written (changes in between are written together). */
export const INDEX_WRITE_DELAY_MS = 1000;

export class WorkIndex {
  private readonly due = new Map<string, number>();
  private cancelWrite: (() => void) | null = null;
  readonly file: string;

  constructor(
    home: Home,
    private readonly clock: Pick<Clock, 'setTimer'>,
  ) {
    this.file = path.join(home.root, '.openboa', 'work-index.json');
  }

  /** The ids the index on disk names, soonest due first; [] when there is none or it cannot be read. */
  load(): string[] {
    let parsed: z.infer<typeof IndexFile>;
    try {
      const r = IndexFile.safeParse(JSON.parse(fs.readFileSync(this.file, 'utf8')));
      if (!r.success) return [];
      parsed = r.data;
    } catch {
      return [];
    }
    for (const [id, at] of Object.entries(parsed.due)) this.due.set(id, at);
    return [...this.due.entries()].sort((a, b) => a[1] - b[1]).map(([id]) => id);
  }

  /** What the daemon now knows of a session: due at `atMs` (0: now), or null for nothing to do (or gone). */
  note(id: string, atMs: number | null): void {
    const was = this.due.get(id);
    if (atMs === null) {
      if (was === undefined) return;
      this.due.delete(id);
    } else {
      if (was === atMs) return;
      this.due.set(id, atMs);
    }
    this.cancelWrite ??= this.clock.setTimer(INDEX_WRITE_DELAY_MS, () => {
      this.cancelWrite = null;
      this.write();
    });
  }

  /** Writes the index now (at stop); a failure only costs the next start its order. */
  write(): void {
    this.cancelWrite?.();
    this.cancelWrite = null;
    try {
      fs.mkdirSync(path.dirname(this.file), { recursive: true });
      writeJsonAtomic(this.file, { format: 1, due: Object.fromEntries(this.due) }, { durable: false });
    } catch {
      // derived: the next start scans everything anyway
    }
  }
}

/**
 * Last change of a session's log (ms), 0 when it cannot be read. The log
 * only: one stat a session (at 10,000 sessions the stats are most of the
 * time before the first run); a revisit the daemon scheduled is in the
 * index, and one written by hand while no daemon ran is found by the scan
 * in its turn.
 */
function modifiedMs(eventsFile: string): number {
  return fs.statSync(eventsFile, { throwIfNoEntry: false })?.mtimeMs ?? 0;
}

/** The order of the start scan: indexed sessions first, then the rest newest-modified first (see the module comment). */
export function discoveryOrder(sessionsDir: string, ids: readonly string[], indexed: readonly string[]): string[] {
  const present = new Set(ids);
  const first = indexed.filter((id) => present.has(id));
  const taken = new Set(first);
  // The path by hand, not path.join: at 10,000 sessions its normalising costs a fifth of the stats.
  const dir = sessionsDir + path.sep;
  const rest = ids.filter((id) => !taken.has(id)).map((id) => ({ id, m: modifiedMs(`${dir}${id}${path.sep}events.jsonl`) }));
  rest.sort((a, b) => b.m - a.m || (a.id < b.id ? 1 : -1));
  return [...first, ...rest.map((r) => r.id)];
}
