/**
 * How the host's mount table names a path: the form /proc/self/mountinfo
 * writes it in (escaped), and, for a path on a file system of its own, its
 * path inside that file system. VirtualFs uses these to recognise a mount's
 * host path in text the model would read (hideHostPaths).
 */
import fs from 'node:fs';
import path from 'node:path';

/** A path as /proc/<pid>/mountinfo writes it: space, tab, newline and backslash as octal escapes. */
export function mountinfoEscape(p: string): string {
  return p.replace(/[ \t\n\\]/g, (c) => `\\${c.charCodeAt(0).toString(8).padStart(3, '0')}`);
}

/** The host's mounts, from the daemon's own mountinfo: [mount point, root within its file system]. */
export function hostMounts(): Array<{ point: string; root: string }> {
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
export function fsRelative(host: string, table: Array<{ point: string; root: string }>): string | null {
  let best: { point: string; root: string } | null = null;
  for (const m of table) {
    const under = host === m.point || host.startsWith(m.point === '/' ? '/' : `${m.point}/`);
    if (under && (!best || m.point.length > best.point.length)) best = m;
  }
  if (!best) return null;
  const rel = path.relative(best.point, host);
  const inFs = path.posix.join(best.root, rel);
  return inFs === host ? null : inFs;
}
