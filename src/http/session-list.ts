/**
 * GET /v1/sessions: the SDK's bidirectional cursor over sessions, newest
 * first by default, without reading every log.
 *
 * Session ids are UUIDv7, so the sorted folder names of sessions/ are the
 * sessions in the order they were made: a page walks the names from its
 * cursor and folds only the sessions it looks at (store.snapshot continues
 * from each session.json: a stat and a small read when nothing changed). A
 * page of 20 with no filter reads 20 snapshots (21: one more says whether
 * there is a next page); a filter that few sessions pass reads until it has
 * found its page, or the end.
 *
 * The folder's names are kept between requests while the folder's mtime
 * stays the same (allIds).
 *
 * A cursor (`page`) is opaque to clients: base64url of the id it continues
 * from and the direction (next: after it in the listing's order; prev:
 * before it). A run token lists only its own session and its children (its
 * session's record of them), never the home's other sessions.
 */
import fs from 'node:fs';
import type { Runtime } from '../core/run/run-context.js';
import type { SessionSnapshot } from '../core/schema/index.js';
import { invalidRequest } from './api-error.js';
import type { Principal } from './auth.js';
import { mayAccess, redactorOf } from './session-access.js';
import { inRange, type ListSessionsQuery } from './wire-schemas.js';
import { wireSession } from './wire-objects.js';

interface Cursor {
  id: string;
  dir: 'next' | 'prev';
}

const encode = (c: Cursor) => Buffer.from(JSON.stringify([c.dir === 'next' ? 'n' : 'p', c.id])).toString('base64url');

function decode(page: string): Cursor {
  try {
    const v = JSON.parse(Buffer.from(page, 'base64url').toString('utf8')) as unknown;
    if (Array.isArray(v) && v.length === 2 && (v[0] === 'n' || v[0] === 'p') && typeof v[1] === 'string') return { dir: v[0] === 'n' ? 'next' : 'prev', id: v[1] };
  } catch {
    // below
  }
  throw invalidRequest('page: not a cursor this server gave (pass next_page or prev_page as it came)');
}

export interface SessionPage {
  data: Record<string, unknown>[];
  next_page: string | null;
  prev_page: string | null;
}

export function listSessions(rt: Runtime, who: Principal, q: ListSessionsQuery): SessionPage {
  const cursor = q.page ? decode(q.page) : null;
  // The ids in the listing's order.
  const ids = candidates(rt, who);
  if (q.order === 'desc') ids.reverse();
  // A prev cursor walks back from its id; the page is then turned around to the listing's order.
  const back = cursor?.dir === 'prev';
  const walk = !cursor ? ids : back ? ids.slice(0, at(ids, cursor.id, q.order)).reverse() : ids.slice(at(ids, cursor.id, q.order) + (ids.includes(cursor.id) ? 1 : 0));
  const found: SessionSnapshot[] = [];
  let more = false;
  for (const id of walk) {
    const s = readable(rt, id);
    if (!s || !passes(s, who, q)) continue;
    if (found.length === q.limit) {
      more = true;
      break;
    }
    found.push(s);
  }
  if (back) found.reverse();
  const first = found[0];
  const last = found[found.length - 1];
  // Going forward, what came before is the cursor's side; going back, what comes after is.
  const next = back ? (last ? encode({ id: last.id, dir: 'next' }) : null) : more && last ? encode({ id: last.id, dir: 'next' }) : null;
  const prev = back ? (more && first ? encode({ id: first.id, dir: 'prev' }) : null) : cursor && first ? encode({ id: first.id, dir: 'prev' }) : null;
  return { data: found.map((s) => wireSession(s, redactorOf(rt, s))), next_page: next, prev_page: prev };
}

/**
 * The sessions folder's names, oldest first, read again only when the
 * folder changed (its mtime in ns and inode: a session made or deleted
 * renames an entry in or out, which moves it). Reading 10,000 names and
 * sorting them costs tens of ms on a loaded machine; a stat costs µs.
 */
const listings = new WeakMap<object, { stamp: string; ids: string[] }>();

function allIds(rt: Runtime): string[] {
  let stamp = 'none';
  try {
    const st = fs.statSync(rt.home.sessionsDir, { bigint: true });
    stamp = `${st.ino}:${st.mtimeNs}`;
  } catch {
    // no folder: listIds answers []
  }
  const kept = listings.get(rt.store);
  if (kept && kept.stamp === stamp) return [...kept.ids];
  const ids = rt.store.listIds();
  listings.set(rt.store, { stamp, ids });
  return [...ids];
}

/** Every id the caller may list, oldest first. */
function candidates(rt: Runtime, who: Principal): string[] {
  if (who.kind === 'key') return allIds(rt);
  const own = readable(rt, who.claims.sessionId);
  return own ? [own.id, ...Object.keys(own.children)].sort() : [];
}

/** Where `id` is in the listing (it may be gone since: then where it would be, before the first id that comes after it). */
function at(ids: readonly string[], id: string, order: 'asc' | 'desc'): number {
  const k = ids.indexOf(id);
  if (k !== -1) return k;
  const past = ids.findIndex((x) => (order === 'asc' ? x > id : x < id));
  return past === -1 ? ids.length : past;
}

/** The snapshot, or null for a session that cannot be read (gone, or a log this code does not read). */
function readable(rt: Runtime, id: string): SessionSnapshot | null {
  try {
    return rt.store.snapshot(id);
  } catch {
    return null;
  }
}

function passes(s: SessionSnapshot, who: Principal, q: ListSessionsQuery): boolean {
  if (!mayAccess(who, s)) return false;
  if (s.archived_at !== null && q.include_archived !== true) return false;
  if (q['statuses[]'] && !q['statuses[]'].includes(s.status)) return false;
  if (q.agent_id !== undefined && s.agent_id !== q.agent_id) return false;
  return inRange(s.created_at, q);
}
