/**
 * Sandboxes a killed daemon left behind. A run's shell is a session leader
 * started in the session's workspace (bwrap, unshare or bash); bwrap's
 * --die-with-parent and unshare's --kill-child end it with its daemon, but
 * the kernel's parent-death signal is armed by the child after it starts, so
 * a daemon killed in that instant leaves a sandbox behind, adopted by init,
 * waiting forever. At start the daemon reaps them (reapOrphanSandboxes).
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

/** Whether a process with this pid exists (a zombie counts: it is gone but for its exit status). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Kills orphaned sandboxes of sessions under `sessionsDir`; returns how many
 * it found. An orphan is a process adopted by init (its parent died) running
 * the runtime's shell command line (isOurShell) with its working directory
 * under sessions/, and either the leader of its session (the pty's child:
 * bwrap, unshare or bash) or a process whose session leader is gone. The
 * second is bwrap's own child, the init of the sandbox's PID namespace: when
 * the daemon is killed in the instant between bwrap forking it and it arming
 * its parent-death signal, the outer bwrap dies of the pty's hangup and the
 * namespace's init outlives it, adopted by init, its session's leader gone
 * (seen about twice in 400 kills timed at a shell's start). Every process
 * below the orphan is killed, and, when it leads its session, everything in
 * that session (a PID namespace's init has every process of its sandbox
 * below it).
 */
export function reapOrphanSandboxes(sessionsDir: string): number {
  const root = `${path.resolve(sessionsDir)}/`;
  const all = processes();
  let reaped = 0;
  for (const p of all) {
    if (p.ppid !== 1 || (p.pid !== p.sid && alive(p.sid))) continue;
    let cwd: string;
    try {
      cwd = fs.readlinkSync(`/proc/${p.pid}/cwd`);
    } catch {
      continue;
    }
    if (!cwd.startsWith(root) || !isOurShell(p.pid)) continue;
    // A leader's session is its sandbox. A session whose leader is gone is not a sandbox any more: its id may be
    // another's by now (the pid reused by a session leader that died too), so only what runs below the orphan goes.
    const members = p.pid === p.sid ? all.filter((x) => x.sid === p.sid).map((x) => x.pid) : [];
    for (const member of new Set([...members, ...descendants(all, p.pid)])) {
      try {
        process.kill(member, 'SIGKILL');
      } catch {
        // gone already
      }
    }
    reaped += 1;
  }
  return reaped;
}

/** `pid` and every process below it. */
function descendants(all: readonly Proc[], pid: number): number[] {
  const out = [pid];
  for (let i = 0; i < out.length; i++) for (const c of all) if (c.ppid === out[i] && !out.includes(c.pid)) out.push(c.pid);
  return out;
}
