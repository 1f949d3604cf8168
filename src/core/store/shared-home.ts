/**
 * Whether a home is shared between hosts (docs/daemon.md, "Several hosts on
 * one home"). On a network file system `O_APPEND` is not atomic between
 * clients (an NFS client appends at the size it last saw), so a person's
 * event written from one host may overwrite a line another host's run is
 * appending. On a shared home such events go through `inbox/` instead (a
 * rename is atomic on NFS), and the run that holds the lease moves them in.
 *
 * The answer, in this order: `shared: true|false` in the home's
 * `openboa.yaml`; else the type of the file system the home is on
 * (/proc/self/mountinfo): NFS, SMB/CIFS, CephFS, GlusterFS, Lustre, 9p and
 * sshfs count as shared. A home with an openboa.yaml that does not load is
 * judged by its file system (the daemon reports the bad file).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Home } from '../foundation/home.js';

/** File system types (mountinfo's field after " - ") whose clients do not share one page cache. */
const NETWORK_FS = new Set(['nfs', 'nfs4', 'cifs', 'smb3', 'smbfs', 'ceph', 'glusterfs', 'lustre', '9p', 'afs', 'gpfs', 'beegfs', 'fuse.sshfs', 'fuse.ceph', 'fuse.ceph-fuse', 'fuse.glusterfs', 'fuse.juicefs', 'fuse.gcsfuse']);

/** Undoes mountinfo's octal escapes (`\040` for a space). */
function unescape(s: string): string {
  return s.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));
}

/** The type of the file system `dir` is on (the longest mount point above its real path), or null when unknown. */
export function fileSystemType(dir: string, mountinfo = '/proc/self/mountinfo'): string | null {
  let real: string;
  let text: string;
  try {
    real = fs.realpathSync(dir);
    text = fs.readFileSync(mountinfo, 'utf8');
  } catch {
    return null;
  }
  let best: { at: string; type: string } | null = null;
  for (const line of text.split('\n')) {
    const dash = line.indexOf(' - ');
    if (dash < 0) continue;
    const at = unescape(line.split(' ')[4] ?? '');
    const type = line.slice(dash + 3).split(' ')[0] ?? '';
    const under = at === '/' || real === at || real.startsWith(`${at}/`);
    // A later line at the same mount point is mounted over the earlier one.
    if (under && (!best || at.length >= best.at.length)) best = { at, type };
  }
  return best?.type ?? null;
}

export function isNetworkFileSystem(type: string | null): boolean {
  return type !== null && NETWORK_FS.has(type);
}

/**
 * `shared:` in openboa.yaml when it says, else null. Read as its one top-level line, without the YAML
 * parser, which `openboa send` does not otherwise load (the schema, HomeConfig, declares the key).
 */
function configured(home: Home): boolean | null {
  let text: string;
  try {
    text = fs.readFileSync(path.join(home.root, 'openboa.yaml'), 'utf8');
  } catch {
    return null;
  }
  const m = /^shared:[ \t]*(true|false)[ \t]*(?:#.*)?$/m.exec(text);
  return m ? m[1] === 'true' : null;
}

/** Whether the home is shared between hosts (see the module comment). */
export function homeIsShared(home: Home): boolean {
  return configured(home) ?? isNetworkFileSystem(fileSystemType(home.root));
}
