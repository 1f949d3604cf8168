/**
 * A Sandbox that reports what the file tools wrote into one directory
 * (/memory), with the exact content: each successful write or edit there is
 * recorded as a version at once (docs/memory.md, "Versions"). The scan
 * after each turn finds what bash changed; this finds every write of the
 * file tools even when another session replaces the file before any scan,
 * so two sessions writing one memory file at once leave two versions.
 *
 * Everything else is the inner sandbox's. `record` must not throw; a write
 * it fails to record is found by the next scan (the file is there).
 */
import path from 'node:path';
import { failure, isFailure, type SandboxFailure, type Change, type ExecOptions, type GrepOptions, type ListOptions, type OpOptions, type ReadOptions, type Sandbox, type SearchOptions } from '../sandbox/sandbox.js';

export type RecordWrite = (rel: string, data: Buffer) => Promise<void>;

export interface RecordingOptions {
  /** Paths (relative to `target`) the file tools may not write, with the reason the model reads: derived files. */
  derived?: ReadonlyMap<string, string>;
  /** Paths not recorded (temp files). */
  skip?: (rel: string) => boolean;
  /** Where relative paths start, as in the inner sandbox (default /workspace). */
  home?: string;
}

export function recordingSandbox(inner: Sandbox, target: string, record: RecordWrite, o: RecordingOptions = {}): Sandbox {
  const relOf = (v: string): string | null => (v.startsWith(`${target}/`) ? v.slice(target.length + 1) : null);
  const recorded = (v: string): string | null => {
    const rel = relOf(v);
    return rel === null || o.skip?.(rel) ? null : rel;
  };
  const home = o.home ?? '/workspace';
  /**
   * A derived file named directly, absolute or relative to the home
   * ("../memory/LEARNINGS.md" from /workspace) — the path as the inner
   * sandbox resolves it, before any write. (A symlink to it from elsewhere
   * is not caught here; what it writes is overwritten at the next render.)
   */
  const derived = (p: string): SandboxFailure | null => {
    const rel = relOf(path.posix.resolve(home, p));
    const why = rel === null ? undefined : o.derived?.get(rel);
    return why ? failure('refused', `${target}/${rel}: ${why}`) : null;
  };
  return {
    exec: (c: string, o: ExecOptions) => inner.exec(c, o),
    restart: (o: OpOptions) => inner.restart(o),
    execFresh: (c: string, o: ExecOptions) => inner.execFresh(c, o),
    read: (p: string, o: ReadOptions) => inner.read(p, o),
    async write(p: string, content: string, op: OpOptions) {
      const refused = derived(p);
      if (refused) return refused;
      const r = await inner.write(p, content, op);
      const rel = isFailure(r) ? null : recorded(r.virtual);
      if (rel !== null) await record(rel, Buffer.from(content, 'utf8'));
      return r;
    },
    async modify(p: string, change: Change, ro: ReadOptions) {
      const refused = derived(p);
      if (refused) return refused;
      let wrote: string | null = null;
      const r = await inner.modify(
        p,
        (content, virtual) => {
          const next = change(content, virtual);
          wrote = next;
          return next;
        },
        ro,
      );
      const rel = isFailure(r) || !r.written || wrote === null ? null : recorded(r.virtual);
      if (rel !== null) await record(rel, Buffer.from(wrote as unknown as string, 'utf8'));
      return r;
    },
    list: (p: string, o: ListOptions) => inner.list(p, o),
    glob: (pattern: string, o: SearchOptions) => inner.glob(pattern, o),
    grep: (pattern: string, o: GrepOptions) => inner.grep(pattern, o),
    hideHostPaths: (t: string) => inner.hideHostPaths(t),
    close: () => inner.close(),
  };
}
