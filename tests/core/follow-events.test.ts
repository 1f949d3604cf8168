/**
 * Following a log (SessionStore.follow / subscribe): real files in a temp
 * home, in process. Every wait is for a batch the follower delivers, or for
 * the manual clock's sweep; nothing sleeps on the real clock.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { SessionStore, START, type EventLines } from '../../src/core/store/session-store.js';
import { FOLLOW_SWEEP_MS } from '../../src/core/store/follow-events.js';
import { sendMessage } from '../../src/core/ops/session-ops.js';
import { createSession } from '../../src/core/ops/create-session.js';
import type { ParsedEventLine } from '../../src/core/store/parse-line.js';
import { tempHome } from '../helpers/home.js';
import { testDeps } from '../helpers/deps.js';

function setup(t: TestContext) {
  const h = tempHome(t);
  const deps = testDeps();
  const store = new SessionStore(h.home, deps);
  const id = createSession(store, { agent: 'demo' }).id;
  const stop = new AbortController();
  t.after(() => stop.abort());
  return { h, deps, store, id, events: store.paths(id).events, stop };
}

/** The next batch a follower delivers (its iteration must not end first). */
async function next(it: AsyncGenerator<EventLines, void, void>): Promise<EventLines> {
  const r = await it.next();
  assert.equal(r.done, false, 'the follow ended');
  return r.value as EventLines;
}

const texts = (lines: ParsedEventLine[]) =>
  lines.map((l) => (l.kind === 'event' ? (l.event.type === 'user.message' ? (l.event.content[0] as { text: string }).text : l.event.type) : l.kind === 'invalid' ? `invalid line ${l.rejection.line}` : 'blank'));

test('follow delivers what is there, then each append, in order, from where the last batch ended', async (t) => {
  const { store, id, events, stop } = setup(t);
  const it = store.follow(id, { signal: stop.signal });
  const first = await next(it);
  assert.deepEqual(texts(first.lines), ['session.created']);
  assert.equal(first.reset, false);
  sendMessage(store, id, 'one');
  assert.deepEqual(texts((await next(it)).lines), ['one']);
  fs.appendFileSync(events, '{"type":"user.message","content":"two, by hand"}\n{"type":"user.message","content":"three"}\n');
  const b = await next(it);
  // one write, but a watch event may come before the whole write is read: the two lines may come in one batch or two
  const got = texts(b.lines);
  if (got.length === 1) got.push(...texts((await next(it)).lines));
  assert.deepEqual(got, ['two, by hand', 'three']);
  stop.abort();
  assert.deepEqual(await it.next(), { done: true, value: undefined }, 'the follow ends when its signal aborts');
});

test('a cursor from an earlier read or a snapshot starts the follow after it', async (t) => {
  const { store, id, stop } = setup(t);
  sendMessage(store, id, 'old');
  const from = store.snapshot(id).journals.events;
  sendMessage(store, id, 'new');
  const it = store.follow(id, { from, signal: stop.signal });
  const b = await next(it);
  assert.deepEqual(texts(b.lines), ['new']);
  assert.equal((b.lines[0] as { line: number }).line, 3, "line numbers are the log's");
  assert.deepEqual(texts(store.readEvents(id, from).lines), ['new'], 'readEvents reads from the same cursor');
  await it.return();
});

test('a last line without its newline is not delivered until it is whole', async (t) => {
  const { store, id, events, stop } = setup(t);
  fs.appendFileSync(events, '{"type":"user.message","content":"half wr');
  const it = store.follow(id, { signal: stop.signal });
  // The first read meets the unfinished line: it delivers what is complete and holds the rest back.
  const first = await next(it);
  assert.deepEqual(texts(first.lines), ['session.created']);
  assert.equal(first.cursor.line, 1);
  fs.appendFileSync(events, 'itten"}\n');
  assert.deepEqual(texts((await next(it)).lines), ['half written'], 'whole, once its newline came');
  // And while following: a line written in two parts is never delivered as a broken piece.
  fs.appendFileSync(events, '{"type":"user.message","con');
  fs.appendFileSync(events, 'tent":"in two writes"}\n');
  assert.deepEqual(texts((await next(it)).lines), ['in two writes']);
  await it.return();
});

test('a log replaced by rename is still followed: the watch is on the folder, and the read starts again at line 1', async (t) => {
  const { store, id, events, stop } = setup(t);
  const it = store.follow(id, { signal: stop.signal });
  await next(it);
  const lines = fs.readFileSync(events, 'utf8');
  const tmp = path.join(path.dirname(events), 'events.jsonl.restored');
  fs.writeFileSync(tmp, `${lines}{"type":"user.message","content":"restored"}\n`);
  fs.renameSync(tmp, events);
  const b = await next(it);
  assert.equal(b.reset, true);
  assert.deepEqual(texts(b.lines), ['session.created', 'restored']);
  sendMessage(store, id, 'after the restore');
  assert.deepEqual(texts((await next(it)).lines), ['after the restore'], 'and the new file is followed');
  await it.return();
});

test('without a watch, the sweep finds appends when the injected clock says so', async (t) => {
  const { deps, store, id, stop } = setup(t);
  const it = store.follow(id, { signal: stop.signal, watch: false });
  await next(it);
  const pending = next(it);
  await deps.clock.armed(FOLLOW_SWEEP_MS);
  sendMessage(store, id, 'seen by the sweep');
  await deps.clock.advance(FOLLOW_SWEEP_MS);
  assert.deepEqual(texts((await pending).lines), ['seen by the sweep']);
  await it.return();
  assert.equal(deps.clock.pendingTimers, 0, 'no timer is left behind');
});

test('subscribe calls back once per batch, waits for a slow callback, and resolves when aborted', async (t) => {
  const { store, id, stop } = setup(t);
  const seen: string[] = [];
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let arrived!: () => void;
  let waitFor = new Promise<void>((r) => (arrived = r));
  const done = store.subscribe(id, { from: START, signal: stop.signal }, async (batch) => {
    seen.push(...texts(batch.lines));
    arrived();
    if (seen.length === 1) await gate; // the first batch holds the next back
  });
  await waitFor;
  waitFor = new Promise<void>((r) => (arrived = r));
  sendMessage(store, id, 'a');
  sendMessage(store, id, 'b');
  assert.deepEqual(seen, ['session.created'], 'nothing more while the callback is busy');
  release();
  await waitFor;
  while (seen.length < 3) {
    waitFor = new Promise<void>((r) => (arrived = r));
    await waitFor;
  }
  assert.deepEqual(seen, ['session.created', 'a', 'b']);
  stop.abort();
  await done;
});

test('following a session that does not exist fails at once with not_found', async (t) => {
  const { store } = setup(t);
  await assert.rejects(store.follow('01a206ed-f620-72c0-a5b0-000000000000').next(), (e: unknown) => (e as { code?: string }).code === 'not_found');
});
