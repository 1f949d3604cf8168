/**
 * The folders under sessions/: which are sessions (a UUIDv7 name), and the
 * half-made ones a crash inside SessionStore.create() can leave
 * (`.creating-<id>`, never visible as sessions: create() renames a finished
 * folder into place in one step), and taking a session just made back out.
 *
 * A `.creating-*` folder is removed with removeTree, never by a removal
 * that walks it by path (fs.rmSync recursive). Whoever can write sessions/
 * (every user who creates sessions on a home shared between users) can
 * make or fill one, and swap a subfolder for a symlink while such a
 * removal is between looking at the subfolder and deleting what is in it,
 * which then deletes files where the symlink points. removeTree opens each
 * folder without following a symlink and names its entries through the
 * open descriptor.
 */
import fs from 'node:fs';
import path from 'node:path';
import { removeTree } from './remove-tree.js';
import { LOG_FORMAT, UUID_V7 } from '../schema/format-constants.js';
import type { NewEvent } from '../schema/index.js';
import type { CreateSessionInput } from './store-types.js';

/** Ids of every session directory, oldest first (UUIDv7 sorts by time); none when sessions/ does not exist. */
export function listSessionIds(sessionsDir: string): string[] {
  let names: string[];
  try {
    names = fs.readdirSync(sessionsDir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw e;
  }
  return names.filter((n) => UUID_V7.test(n)).sort();
}

/**
 * Takes a session folder back out of sight and removes it: renamed to
 * `.creating-<id>` first (one step: no reader sees half of it; if a crash
 * comes before the removal, it is an abandoned creation like any other).
 */
export function discardSessionDir(sessionsDir: string, id: string): void {
  const hidden = path.join(sessionsDir, `.creating-${id}`);
  fs.renameSync(path.join(sessionsDir, id), hidden);
  removeTree(hidden);
}

/**
 * Removes `.creating-<id>` folders last changed more than `olderThanMs`
 * before `nowMs`. Returns how many. Anything else of that name (a symlink,
 * a file) is not a creation's and is left, and so is a folder that cannot be
 * removed whole (the next start tries again).
 */
export function removeAbandonedCreations(sessionsDir: string, nowMs: number, olderThanMs: number): number {
  let n = 0;
  let names: string[] = [];
  try {
    names = fs.readdirSync(sessionsDir).filter((x) => x.startsWith('.creating-'));
  } catch {
    return 0;
  }
  for (const name of names) {
    const dir = path.join(sessionsDir, name);
    try {
      const st = fs.lstatSync(dir);
      if (!st.isDirectory() || nowMs - st.mtimeMs < olderThanMs) continue;
      removeTree(dir);
      n++;
    } catch {
      // raced with another cleaner, or not ours to remove
    }
  }
  return n;
}

/** The first line of a new session's log: what it was created with (SessionStore.create). */
export function createdEvent(input: CreateSessionInput): NewEvent {
  return {
    type: 'session.created',
    format: LOG_FORMAT,
    agent_id: input.agentId,
    environment_id: input.environmentId,
    ...(input.title ? { title: input.title } : {}),
    ...(input.parentSessionId ? { parent_session_id: input.parentSessionId } : {}),
    ...(input.depth ? { depth: input.depth } : {}),
    ...(input.treeMaxDepth !== undefined ? { tree_max_depth: input.treeMaxDepth } : {}),
    ...(input.treeMaxSessions !== undefined ? { tree_max_sessions: input.treeMaxSessions } : {}),
    ...(input.treeMaxSpawnsPerMinute !== undefined ? { tree_max_spawns_per_minute: input.treeMaxSpawnsPerMinute } : {}),
    ...(input.overrides && Object.keys(input.overrides).length ? { overrides: input.overrides } : {}),
    ...(input.metadata && Object.keys(input.metadata).length ? { metadata: input.metadata } : {}),
  };
}
