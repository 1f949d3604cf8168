/**
 * A session's end of life, the core of `openboa archive` and `openboa
 * delete` (and of the HTTP API's archive and delete): the one place that
 * decides when each is allowed.
 *
 * Archive is a line in the log (`session.updated {archived: true}`): the
 * session is kept whole, never woken again (plan.ts skips it, whatever is
 * appended), and hidden from listings that do not ask for it. Unarchiving is
 * the same line with `archived: false`. A running session is not archived:
 * interrupt it first.
 *
 * Delete removes the folder. It takes the session's lease first, so no run
 * is in progress and none can start while it goes; the folder is then
 * renamed to a hidden name in sessions/ (one atomic step: from then on no
 * reader sees the session) and removed. A kill -9 between the two leaves a
 * hidden `.deleted-*` folder that no listing shows, removed by the next
 * delete. Children are not deleted with their parent: each is a session of
 * its own (its reports to a parent that is gone are dropped).
 */
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { acquireLease } from '../foundation/lease.js';
import { busy, OpenboaError } from '../foundation/errors.js';
import type { SessionEvent } from '../schema/index.js';
import type { SessionStore } from '../store/session-store.js';
import { removeTree } from '../store/remove-tree.js';

/** The hidden name a deleted session's folder has between its rename and its removal. */
const DELETED = /^\.deleted-[0-9a-f-]+-[0-9a-f]{8}$/;

export interface LifecycleResult {
  event: SessionEvent | null;
  /** What it changed, in words, when it is not the plain case. */
  notes: string[];
}

/** Archives (or with `archived: false`, unarchives) a session that is not running. */
export function archiveSession(store: SessionStore, sessionId: string, archived = true): LifecycleResult {
  const s = store.snapshot(sessionId);
  if (archived && s.status === 'running') throw busy(`session ${sessionId} is running: interrupt it first, then archive it`);
  if (archived === (s.archived_at !== null)) {
    return { event: null, notes: [archived ? `session ${sessionId} was already archived (since ${s.archived_at}); nothing changed` : `session ${sessionId} was not archived; nothing changed`] };
  }
  const [event] = store.deliverEvents(sessionId, [{ type: 'session.updated', archived }]);
  const notes: string[] = [];
  if (archived && (s.pending_events.length > 0 || s.pending_wakes.length > 0)) {
    notes.push(`it had ${s.pending_events.length} pending event(s) and ${s.pending_wakes.length} pending revisit(s); they stay in the log, and run only if it is unarchived`);
  }
  return { event: event as SessionEvent, notes };
}

/**
 * Deletes a session's folder, refused (busy) while a run holds its lease.
 * Returns the ids of its children, which are kept, and the deleted folders
 * that could not be removed from the disk (each name and why; the next
 * delete tries again).
 */
export async function deleteSession(store: SessionStore, sessionId: string, nowIso: string): Promise<{ children: string[]; left: string[] }> {
  const p = store.require(sessionId);
  const children = Object.keys(store.snapshot(sessionId, { persist: false }).children);
  let lease;
  try {
    // On a shared home, a lease another host refreshes is judged by watching it, never by this host's clock.
    lease = await acquireLease(p, { purpose: 'delete', nowIso, shared: store.shared });
  } catch (e) {
    if (OpenboaError.is(e) && e.code === 'busy') throw busy(`session ${sessionId} is running (${e.message}): interrupt it, or wait for its run to end, then delete it`);
    throw e;
  }
  const trash = path.join(path.dirname(p.dir), `.deleted-${sessionId}-${randomBytes(4).toString('hex')}`);
  try {
    fs.renameSync(p.dir, trash);
  } catch (e) {
    await lease.release();
    throw e;
  }
  // The lock moved with the folder; it goes with it.
  await lease.release().catch(() => {});
  return { children, left: removeDeletedFolders(path.dirname(p.dir)) };
}

/**
 * Removes what deletes left behind in `sessionsDir` (a kill -9 between the
 * rename and the removal, or a folder that could not be removed). Never
 * throws: the sessions are deleted already. Returns, for each folder left,
 * its name and why.
 */
export function removeDeletedFolders(sessionsDir: string): string[] {
  let names: string[];
  try {
    names = fs.readdirSync(sessionsDir);
  } catch {
    return [];
  }
  const left: string[] = [];
  for (const n of names) {
    if (!DELETED.test(n)) continue;
    try {
      removeTree(path.join(sessionsDir, n));
    } catch (e) {
      left.push(`${n}: ${(e as Error).message}`);
    }
  }
  return left;
}
