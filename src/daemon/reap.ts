/**
 * Sandboxes a killed daemon left behind. A run's shell is a session leader
 * started in the session's workspace (bwrap, unshare or bash); bwrap's
 * --die-with-parent and unshare's --kill-child end it with its daemon, but
 * the kernel's parent-death signal is armed by the child after it starts, so
 * a daemon killed in that instant leaves a sandbox behind, adopted by init,
 * waiting forever. At start the daemon reaps them: every session leader
 * whose parent is init (its daemon is gone), whose working directory lies
 * under this home's sessions/ and whose command line is the shell the
 * runtime starts (see isOurShell) is killed with everything in its session.
 * A sandbox of a live `openboa wake` has that process as its parent and is
 * left alone.
 */
import fs from 'node:fs';
import path from 'node:path';

interface Proc {
  pid: number;
  ppid: number;
  sid: number;
}

function processes(): Proc[] {
  let names: string[];
  try {
    names = fs.readdirSync('/proc');
  } catch {
    return [];
  }
  const out: Proc[] = [];
  for (const n of names) {
    if (!/^\d+$/.test(n)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${n}/stat`, 'utf8');
      // after the ")" of comm: state ppid pgrp session ...
      const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.push({ pid: Number(n), ppid: Number(rest[1]), sid: Number(rest[3]) });
    } catch {
      // exited meanwhile
    }
  }
  return out;
}

/**
 * Whether a process is a shell the runtime started: its command line is
 * bwrap, unshare or bash running `bash --noprofile --norc --noediting` (what
 * pty-shell.ts starts). A person's own process that happens to run in a
 * workspace (a tmux server, an editor) is never one of these.
 */
function isOurShell(pid: number): boolean {
  let argv: string[];
  try {
    argv = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
  } catch {
    return false;
  }
  const prog = path.basename(argv[0] ?? '');
  if (!['bwrap', 'unshare', 'bash'].includes(prog)) return false;
  const i = argv.indexOf('--noprofile');
  return i > 0 && argv[i + 1] === '--norc' && argv[i + 2] === '--noediting';
}

/** Kills orphaned sandboxes of sessions under `sessionsDir`; returns how many it found. */
export function reapOrphanSandboxes(sessionsDir: string): number {
  const root = `${path.resolve(sessionsDir)}/`;
  const all = processes();
  let reaped = 0;
  for (const p of all) {
    if (p.pid !== p.sid || p.ppid !== 1) continue;
    let cwd: string;
    try {
      cwd = fs.readlinkSync(`/proc/${p.pid}/cwd`);
    } catch {
      continue;
    }
    if (!cwd.startsWith(root) || !isOurShell(p.pid)) continue;
    for (const member of all.filter((x) => x.sid === p.sid)) {
      try {
        process.kill(member.pid, 'SIGKILL');
      } catch {
        // gone already
      }
    }
    reaped += 1;
  }
  return reaped;
}
