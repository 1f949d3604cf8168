/**
 * /v1/sessions/{id}/runtime: the session's runtime/ files, read-only, for
 * people (the inspector) and programs alike.
 *
 * Only the names in RUNTIME_FILES are served: the request picks an entry of
 * that table, and the path opened is the table's, joined to the session's
 * runtime folder (openSession checked the id and the folder). No part of
 * the request reaches the file system. The file is opened once with
 * O_NOFOLLOW and read through that handle (a symlink is refused, a
 * non-regular file is answered as absent), at most MAX_RUNTIME_BYTES of it:
 * the tail of a journal (`.jsonl`, the newest lines), the head of anything
 * else, with `truncated: true`.
 *
 * relations.json lists the session's children with their state: a run
 * token gets it of its own session only, not of a child (seesChildrenOf);
 * for a child it is absent from the listing and a 404.
 *
 * What leaves passes through the session's redactor, as `openboa events`
 * prints the log: these files were redacted when written, under the
 * environment's secrets of that run; this redacts again under today's.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Hono } from 'hono';
import { iso } from '../core/foundation/clock.js';
import type { Runtime } from '../core/run/run-context.js';
import { notFound } from './api-error.js';
import type { AuthEnv } from './auth.js';
import type { Principal } from './auth.js';
import { openSession, seesChildrenOf } from './session-access.js';

/** The runtime/ files a client may read, by the name it asks for (docs/inspector.md lists what each holds). */
export const RUNTIME_FILES: Readonly<Record<string, string>> = Object.freeze({
  'plan.json': 'plan.json',
  'context.json': 'context.json',
  'summary.md': 'summary.md',
  'outcome.json': 'outcome.json',
  'usage.json': 'usage.json',
  'relations.json': 'relations.json',
  'event-feed.md': 'event-feed.md',
  'shell.json': 'shell.json',
  'shell-history.jsonl': 'shell-history.jsonl',
  'last-shell-output.txt': 'last-shell-output.txt',
  'tools.json': 'tools.json',
  'permissions.json': 'permissions.json',
  'environment.json': 'environment.json',
  'resources.json': 'resources.json',
  'network.json': 'network.json',
  'vaults.json': 'vaults.json',
  'activations.jsonl': 'activations.jsonl',
  'egress.jsonl': 'egress.jsonl',
});

/** The runtime files that tell of the session's children (seesChildrenOf decides who gets them). */
const CHILDREN_FILES: ReadonlySet<string> = new Set(['relations.json']);

/** Whether `who` may read runtime file `name` of session `id` (one it may see). */
const mayRead = (who: Principal, id: string, name: string) => !CHILDREN_FILES.has(name) || seesChildrenOf(who, id);

/** Largest part of one file served, bytes: a long shell history's newest lines fit; a page stays quick. */
export const MAX_RUNTIME_BYTES = 512 * 1024;

interface RuntimeRead {
  size: number;
  modified_at: string;
  truncated: boolean;
  text: string;
}

/** The file's stat and (with `read`) its text, through one handle; null when it is absent, a symlink or not a regular file. */
function readRuntime(file: string, read: boolean): RuntimeRead | null {
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
  } catch {
    return null;
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) return null;
    const out = { size: st.size, modified_at: iso(st.mtimeMs), truncated: st.size > MAX_RUNTIME_BYTES, text: '' };
    if (!read) return out;
    const len = Math.min(st.size, MAX_RUNTIME_BYTES);
    const from = out.truncated && file.endsWith('.jsonl') ? st.size - len : 0;
    const buf = Buffer.alloc(len);
    const n = fs.readSync(fd, buf, 0, len, from);
    let text = buf.subarray(0, n).toString('utf8');
    // A tail starts mid-line: drop the partial first line.
    if (from > 0) text = text.slice(text.indexOf('\n') + 1);
    out.text = text;
    return out;
  } finally {
    fs.closeSync(fd);
  }
}

export function runtimeRoutes(rt: Runtime): Hono<AuthEnv> {
  const app = new Hono<AuthEnv>();

  app.get('/sessions/:id/runtime', (c) => {
    const who = c.get('principal');
    const s = openSession(rt, who, c.req.param('id'));
    const dir = rt.store.paths(s.id).runtime;
    const data = Object.entries(RUNTIME_FILES).flatMap(([name, file]) => {
      const r = mayRead(who, s.id, name) ? readRuntime(path.join(dir, file), false) : null;
      return r ? [{ name, size: r.size, modified_at: r.modified_at }] : [];
    });
    return c.json({ data });
  });

  app.get('/sessions/:id/runtime/:name', (c) => {
    const who = c.get('principal');
    const s = openSession(rt, who, c.req.param('id'));
    const name = c.req.param('name');
    const file = Object.hasOwn(RUNTIME_FILES, name) ? RUNTIME_FILES[name] : undefined;
    if (file === undefined) throw notFound(`runtime file ${JSON.stringify(name.slice(0, 80))} (known: ${Object.keys(RUNTIME_FILES).join(', ')})`);
    const r = mayRead(who, s.id, name) ? readRuntime(path.join(rt.store.paths(s.id).runtime, file), true) : null;
    if (!r) throw notFound(`runtime/${name} of session ${s.id} (not written yet)`);
    return c.json({ name, size: r.size, modified_at: r.modified_at, truncated: r.truncated, content: s.redactor.text(r.text) });
  });

  return app;
}
