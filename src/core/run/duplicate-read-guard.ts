/**
 * The DuplicateRead guard (docs/context.md, "Guards: failure detection"), a
 * wrapper of the tool policy. Within one run, the same file and range read
 * again with no write, edit or bash call in between is counted: the
 * `warn_at`-th such read runs with a warning after its result, and from the
 * `stop_at`-th on the read is refused, its error result saying why. A
 * write, edit or bash call that is allowed to run resets every count (any
 * of them may change any file). Counts live in the closure, built fresh for
 * each run; the warning and the refusal are in the read's result, which is
 * the guard's record in the log.
 *
 * "The same file and range": the path as the sandbox sees it (relative
 * paths are under /workspace, `.` and `..` resolved), and `view_range`
 * ([1, 0] or [1, -1] is the whole file, as no range is).
 */
import path from 'node:path';
import type { CallDecision, ToolPolicy, ToolUseEvent } from './loop-hooks.js';

/** Calls that may change files: each resets the counts. */
const CHANGES = new Set(['write', 'edit', 'bash']);

export type DuplicateReadSettings = false | { warn_at: number; stop_at: number };

/** The file and range a read call names, or null when its input names none. */
export function readTarget(input: Record<string, unknown>): { key: string; label: string } | null {
  const file = input.file_path;
  if (typeof file !== 'string' || file === '') return null;
  const abs = path.posix.normalize(file.startsWith('/') ? file : `/workspace/${file}`);
  const r = input.view_range;
  let range = 'the whole file';
  if (Array.isArray(r) && r.length === 2 && typeof r[0] === 'number' && typeof r[1] === 'number') {
    const end = r[1] <= 0 ? 'end' : String(r[1]);
    if (!(r[0] <= 1 && end === 'end')) range = `lines ${r[0]}-${end}`;
  }
  return { key: `${abs}\u0000${range}`, label: `${abs} (${range})` };
}

function withNote(d: Extract<CallDecision, { kind: 'run' }>, note: string): CallDecision {
  return { kind: 'run', note: d.note ? `${d.note}\n\n${note}` : note };
}

export function duplicateReadPolicy(inner: ToolPolicy, settings: DuplicateReadSettings): ToolPolicy {
  if (!settings) return inner;
  const { warn_at: warnAt, stop_at: stopAt } = settings;
  const reads = new Map<string, number>();
  return {
    ...inner,
    beforeCall(use: ToolUseEvent): CallDecision {
      const d = inner.beforeCall(use);
      if (d.kind !== 'run') return d;
      if (CHANGES.has(use.name)) {
        reads.clear();
        return d;
      }
      if (use.name !== 'read') return d;
      const t = readTarget(use.input);
      if (!t) return d;
      const n = (reads.get(t.key) ?? 0) + 1;
      reads.set(t.key, n);
      if (stopAt > 0 && n >= stopAt) {
        return {
          kind: 'refuse',
          result: `not run (duplicate_read guard): this is read number ${n} of ${t.label} in this run, and no write, edit or bash call came since the last one, so it would show what you already have. Use that content, or change something first.`,
        };
      }
      if (warnAt > 0 && n >= warnAt) {
        const next = stopAt > 0 ? ` From read number ${stopAt} it is refused.` : '';
        return withNote(d, `[openboa duplicate_read guard: this is read number ${n} of ${t.label} in this run with no write, edit or bash call since the last one; you already had this content.${next}]`);
      }
      return d;
    },
  };
}
