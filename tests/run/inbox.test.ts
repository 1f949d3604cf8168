/**
 * inbox/: files renamed in are moved into events.jsonl by the run, in one
 * write, exactly once, even when the previous move was cut short.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { bench, textOf } from '../helpers/run.js';
import { startDaemon } from '../helpers/daemon.js';

/** Writes a file elsewhere in inbox/ under a hidden name, then renames it in, as writers must. */
function drop(dir: string, name: string, text: string) {
  const tmp = path.join(dir, `.tmp-${name}`);
  fs.writeFileSync(tmp, text);
  fs.renameSync(tmp, path.join(dir, name));
}

const userTexts = (b: Awaited<ReturnType<typeof bench>>, id: string) =>
  b.events(id).flatMap((e) => (e.type === 'user.message' ? [textOf(e.content)] : []));

test('inbox files (one object, JSONL lines, a bad line) are moved in, answered, and the inbox emptied', async (t) => {
  const b = await bench(t, { steps: [{ text: 'got them' }] });
  const id = b.session();
  const p = b.store.paths(id);
  drop(p.inbox, '001.json', JSON.stringify({ type: 'user.message', content: 'pretty one' }, null, 2));
  drop(p.inbox, '002.jsonl', `${JSON.stringify({ type: 'user.message', content: 'line a' })}\n${JSON.stringify({ type: 'user.message', content: 'line b' })}\nnot json\n`);
  fs.writeFileSync(path.join(p.inbox, '.half-written'), '{"type":"user.mess');
  const r = await b.wake(id);
  assert.equal(r.outcome, 'executed');
  assert.deepEqual(userTexts(b, id), ['pretty one', 'line a', 'line b']);
  assert.equal(r.processed_event_ids.length, 3);
  const body = JSON.stringify(b.fake.requests[0]!.body.messages);
  for (const s of ['pretty one', 'line a', 'line b']) assert.ok(body.includes(s), s);
  const errs = b.events(id).filter((e) => e.type === 'session.error');
  assert.equal(errs.length, 1);
  assert.match(errs[0]!.type === 'session.error' ? errs[0]!.error.message : '', /not valid JSON/);
  assert.deepEqual(fs.readdirSync(p.inbox).sort(), ['.half-written', '.taking']);
  assert.deepEqual(fs.readdirSync(path.join(p.inbox, '.taking')), []);
  // every moved line names its file
  const raw = fs.readFileSync(p.events, 'utf8').split('\n').filter((l) => l.includes('"line a"'));
  assert.match(raw[0]!, /"inbox":"[0-9a-f-]{36}-002\.jsonl"/);
});

test('a move cut short after the append is not appended again; one cut short before it is', async (t) => {
  const b = await bench(t, { steps: [{ text: 'ok' }] });
  const id = b.session();
  const p = b.store.paths(id);
  const taking = path.join(p.inbox, '.taking');
  fs.mkdirSync(taking, { recursive: true });
  // crashed after step 2 (appended) and before step 3 (unlink)
  const doneId = `${randomUUID()}-a.json`;
  fs.writeFileSync(path.join(taking, doneId), JSON.stringify({ type: 'user.message', content: 'appended once' }));
  fs.appendFileSync(p.events, `${JSON.stringify({ type: 'user.message', content: 'appended once', inbox: doneId })}\n`);
  // crashed after step 1 (renamed) and before step 2
  fs.writeFileSync(path.join(taking, `${randomUUID()}-b.json`), JSON.stringify({ type: 'user.message', content: 'not yet appended' }));
  const r = await b.wake(id);
  assert.equal(r.outcome, 'executed');
  assert.deepEqual(userTexts(b, id), ['appended once', 'not yet appended']);
  assert.deepEqual(fs.readdirSync(taking), []);
});

test('a symlink or a FIFO in inbox/ is not read: it is set aside and reported', async (t) => {
  const b = await bench(t, { steps: [{ text: 'ok' }] });
  const id = b.session();
  const p = b.store.paths(id);
  const secret = path.join(b.h.root, 'secret.txt');
  fs.writeFileSync(secret, '{"type":"user.message","content":"HOST SECRET"}');
  fs.symlinkSync(secret, path.join(p.inbox, 'link.json'));
  drop(p.inbox, 'ok.json', JSON.stringify({ type: 'user.message', content: 'fine' }));
  const r = await b.wake(id);
  assert.deepEqual(userTexts(b, id), ['fine']);
  assert.ok(fs.existsSync(path.join(p.inbox, '.refused-link.json')));
  assert.ok(r.errors.some((e) => /inbox\/link\.json: cannot be read/.test(e)), r.errors.join('; '));
  assert.ok(b.events(id).some((e) => e.type === 'session.error' && e.error.code === 'invalid_inbox_file'));
});

test('the daemon notices a file renamed into inbox/ and runs it', async (t) => {
  const b = await bench(t, { steps: [{ text: 'from the inbox' }] });
  const id = b.session();
  const td = await startDaemon(t, b);
  await new Promise<void>((resolve) => {
    const check = () => (td.lines.some((l) => JSON.parse(l).event === 'watcher_ready') ? resolve() : setTimeout(check, 20));
    check();
  });
  drop(b.store.paths(id).inbox, 'm.json', JSON.stringify({ type: 'user.message', content: 'dropped' }));
  const r = await td.result((x) => x.session_id === id && x.outcome === 'executed');
  assert.equal(r.processed_event_ids.length, 1);
  assert.deepEqual(userTexts(b, id), ['dropped']);
});
