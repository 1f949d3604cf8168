/**
 * Rewrites host paths to sandbox paths in text the model reads (a tool's
 * output, an error). Under bubblewrap the host path of a mount exists
 * nowhere the agent can reach, yet the kernel shows it (/proc/self/mountinfo
 * lists the source of every bind mount): showing it would only leak the
 * layout of the host. Unconfined, the shell runs on the host and its host
 * paths are its real ones, so nothing is rewritten there (see
 * docs/sandbox.md).
 *
 * Each mount's host path is matched in every form it can appear in: as
 * given, resolved (symlinks), escaped the way mountinfo writes it (space,
 * tab, newline, backslash as \040 ...), and, for a home on a file system of
 * its own, as the path inside that file system (mountinfo's root field). A
 * form is replaced only at a path boundary, longest first, so a nested
 * mount wins over the one around it.
 */
import fs from 'node:fs';
import path from 'node:path';

const P = path.posix;

export class HostPaths {
  private readonly patterns: Array<{ re: RegExp; target: string }> = [];

  /** `mounts`: each mount's sandbox path and host path. With `hide` false, hide() returns its text unchanged. */
  constructor(mounts: ReadonlyArray<{ target: string; host: string }>, hide: boolean) {
    if (!hide) return;
    const hosts = new Map<string, string>();
    const table = hostMounts();
    for (const m of mounts) {
      const target = P.normalize(m.target).replace(/\/+$/, '') || '/';
      const forms = [path.resolve(m.host), realOrSelf(m.host)];
      const inFs = fsRelative(realOrSelf(m.host), table);
      if (inFs) forms.push(inFs);
      // A one-component path (/, /tmp) would rewrite far too much: such a mount is not hidden.
      for (const h of forms) for (const f of [h, mountinfoEscape(h)]) if (f.split('/').filter(Boolean).length >= 2 && !hosts.has(f)) hosts.set(f, target);
    }
    for (const [host, target] of [...hosts].sort((a, b) => b[0].length - a[0].length)) {
      this.patterns.push({ re: new RegExp(`${escapeRe(host)}(?=$|[^A-Za-z0-9._-])`, 'g'), target });
    }
  }

  /** `text` with every mount's host path replaced by its sandbox path. */
  hide(text: string): string {
    let out = text;
    for (const p of this.patterns) out = out.replace(p.re, p.target);
    return out;
  }
}

/** A path as /proc/<pid>/mountinfo writes it: space, tab, newline and backslash as octal escapes. */
export function mountinfoEscape(p: string): string {
  return p.replace(/[ \t\n\\]/g, (c) => `\\${c.charCodeAt(0).toString(8).padStart(3, '0')}`);
}

/** The host's mounts, from the daemon's own mountinfo: [mount point, root within its file system]. */
function hostMounts(): Array<{ point: string; root: string }> {
  const unescape = (x: string) => x.replace(/\\([0-7]{3})/g, (_m, o: string) => String.fromCharCode(parseInt(o, 8)));
  try {
    return fs
      .readFileSync('/proc/self/mountinfo', 'utf8')
      .split('\n')
      .map((l) => l.split(' '))
      .filter((f) => f.length > 5)
      .map((f) => ({ root: unescape(f[3] as string), point: unescape(f[4] as string) }));
  } catch {
    return [];
  }
}

/**
 * What a bind mount of `host` shows as its root in mountinfo, when that
 * differs from `host`: its path inside the file system it lives on (the
 * longest mount point above it, plus that mount's own root).
 */
function fsRelative(host: string, table: Array<{ point: string; root: string }>): string | null {
  let best: { point: string; root: string } | null = null;
  for (const m of table) {
    const under = host === m.point || host.startsWith(m.point === '/' ? '/' : `${m.point}/`);
    if (under && (!best || m.point.length > best.point.length)) best = m;
  }
  if (!best) return null;
  const rel = path.relative(best.point, host);
  const inFs = P.join(best.root, rel);
  return inFs === host ? null : inFs;
}

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** `p` with its symlinks resolved, or as given (absolute) when it does not exist. */
export function realOrSelf(p: string): string {
  try {
    return fs.realpathSync(p);
  } catch {
    return path.resolve(p);
  }
}
