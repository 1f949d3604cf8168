/**
 * Ending a pty's whole process session: every process whose session id is
 * the pty child's, found in /proc, gets SIGKILL. Used by the persistent
 * shell, one-shot commands and stdio MCP servers alike.
 */
import fs from 'node:fs';

/**
 * Kills every process of the session `sid` (a session leader and what it
 * started), found in /proc. Under bwrap or unshare the pty child owns a PID
 * namespace: killing it ends every process inside. Unconfined, every
 * process of the pty's session is killed, which also reaches background
 * jobs in process groups of their own and `nohup`ed ones.
 */
export function killSession(sid: number): void {
  for (const p of sessionMembers(sid)) {
    try {
      process.kill(p, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

/** Pids whose session id is `sid` (the pty child is a session leader), from /proc. */
function sessionMembers(sid: number): number[] {
  const out: number[] = [];
  let names: string[];
  try {
    names = fs.readdirSync('/proc');
  } catch {
    return out;
  }
  for (const n of names) {
    if (!/^\d+$/.test(n)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${n}/stat`, 'utf8');
      // fields after the ")" of comm: state ppid pgrp session ...
      const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(rest[3]) === sid) out.push(Number(n));
    } catch {
      // exited meanwhile
    }
  }
  return out;
}
