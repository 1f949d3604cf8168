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
import { drainInbox, inboxHasFiles, inboxSignature } from '../../src/core/store/inbox.js';
import { dropInInbox } from '../../src/core/store/inbox-drop.js';
import { acquireLease, LEASE_STALE_MS } from '../../src/core/foundation/lease.js';
import { sealTail } from '../../src/core/store/jsonl.js';
import { until } from '../helpers/until.js';

/** Writes a file elsewhere in inbox/ under a hidden name, then renames it in, as writers must (inbox/ made first: it is made on first use). */
function drop(dir: string, name: string, text: string) {
  fs.mkdirSync(dir, { recursive: true });
  const tmp = path.join(dir, `.tmp-${name}`);
  fs.writeFileSync(tmp, text);
  fs.renameSync(tmp, path.join(dir, name));
}

/** The session's paths, its inbox/ made (for a test that puts something there other than by drop()). */
function withInbox(b: Awaited<ReturnType<typeof bench>>, id: string) {
  const p = b.store.paths(id);
  fs.mkdirSync(p.inbox, { recursive: true });
  return p;
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
  const p = withInbox(b, id);
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

test('a session without inbox/ (made on first use) drains as an empty one: nothing taken, nothing reported, nothing made', async (t) => {
  const b = await bench(t);
  const id = b.session();
  const p = b.store.paths(id);
  assert.equal(fs.existsSync(p.inbox), false);
  assert.equal(inboxHasFiles(p), false);
  assert.deepEqual(drainInbox(p, b.deps.ids, [], longQuiet), { files: 0, lines: 0, deferred: 0, problems: [] });
  const r = await b.wake(id);
  assert.equal(r.outcome, 'skipped');
  assert.deepEqual(r.errors, []);
  assert.equal(fs.existsSync(p.inbox), false);
});

test('a durable drop that makes inbox/ syncs the session folder too, so a power loss cannot take back the folder holding the file', async (t) => {
  const b = await bench(t);
  const id = b.session();
  const p = b.store.paths(id);
  const synced: number[] = [];
  const real = fs.fsyncSync;
  t.mock.method(fs, 'fsyncSync', (fd: number) => {
    synced.push(fs.fstatSync(fd).ino);
    real(fd);
  });
  dropInInbox(p, [JSON.stringify({ type: 'user.message', content: 'first' })], true);
  assert.ok(synced.includes(fs.statSync(p.inbox).ino), 'inbox/ synced');
  assert.ok(synced.includes(fs.statSync(p.dir).ino), 'the session folder synced: it gained inbox/');
  synced.length = 0;
  dropInInbox(p, [JSON.stringify({ type: 'user.message', content: 'second' })], true);
  assert.ok(synced.includes(fs.statSync(p.inbox).ino));
  assert.equal(synced.includes(fs.statSync(p.dir).ino), false, 'inbox/ was there already: the session folder did not change');
});

test('the daemon notices a file dropped into a session without inbox/, and later ones through the new inbox/ watch', async (t) => {
  const b = await bench(t, { steps: [{ text: 'first' }, { text: 'second' }] });
  const id = b.session();
  const p = b.store.paths(id);
  assert.equal(fs.existsSync(p.inbox), false);
  const td = await startDaemon(t, b);
  // The start's sweep ran when the scan and the watches were both done; the manual clock
  // brings no other sweep: what follows is found through the watches alone.
  await until(() => td.lines.some((l) => JSON.parse(l).event === 'watcher_ready'));
  // sessions/ and the session's folder: no inbox/ watch until there is an inbox/.
  assert.equal(td.lines.map((l) => JSON.parse(l)).find((l) => l.event === 'watcher_ready').watches, 2);
  // inbox/ made and a file renamed in at once, before the daemon sees the folder's event: no
  // watch saw the rename; the hint that follows the new inbox/ watch does.
  drop(p.inbox, 'm.json', JSON.stringify({ type: 'user.message', content: 'dropped' }));
  const r = await td.result((x) => x.session_id === id && x.outcome === 'executed');
  assert.equal(r.processed_event_ids.length, 1);
  drop(p.inbox, 'n.json', JSON.stringify({ type: 'user.message', content: 'dropped again' }));
  await td.result((x) => x.session_id === id && x.outcome === 'executed' && x !== r);
  assert.deepEqual(userTexts(b, id), ['dropped', 'dropped again']);
});

// ---------------------------------------------------------------- security review: one test per fault

const logText = (b: Awaited<ReturnType<typeof bench>>, id: string) => fs.readFileSync(b.store.paths(id).events, 'utf8');
const longQuiet = { now: () => Date.now() + 3_600_000 }; // every file long quiet: nothing is deferred

test('a symlinked inbox/.taking is refused: the directory it points to is neither read nor emptied', async (t) => {
  const b = await bench(t, { steps: [{ text: 'ok' }] });
  const id = b.session();
  const p = withInbox(b, id);
  const elsewhere = path.join(b.h.root, 'elsewhere');
  fs.mkdirSync(elsewhere);
  fs.writeFileSync(path.join(elsewhere, 'secret.jsonl'), '{"type":"user.message","content":"HOST SECRET"}\n');
  fs.writeFileSync(path.join(elsewhere, `${randomUUID()}-looks-ours.json`), '{"type":"user.message","content":"HOST SECRET 2"}');
  fs.symlinkSync(elsewhere, path.join(p.inbox, '.taking'));
  drop(p.inbox, 'ok.json', JSON.stringify({ type: 'user.message', content: 'fine' }));
  assert.equal(inboxHasFiles(p), true);
  const r = await b.wake(id);
  assert.equal(r.outcome, 'skipped'); // took nothing this time
  assert.ok(r.errors.some((e) => /inbox\/\.taking is not a directory/.test(e)), r.errors.join('; '));
  assert.equal(fs.readdirSync(elsewhere).length, 2);
  assert.ok(fs.lstatSync(path.join(p.inbox, '.refused-.taking')).isSymbolicLink());
  const r2 = await b.wake(id);
  assert.equal(r2.outcome, 'executed');
  assert.deepEqual(userTexts(b, id), ['fine']);
  assert.doesNotMatch(logText(b, id), /HOST SECRET/);
  assert.equal(fs.readdirSync(elsewhere).length, 2);
});

test('a symlinked inbox/ is refused and set aside; its target is untouched; the next drop makes a real one', async (t) => {
  const b = await bench(t, { steps: [{ text: 'ok' }] });
  const id = b.session();
  const p = b.store.paths(id);
  const elsewhere = path.join(b.h.root, 'elsewhere');
  fs.mkdirSync(elsewhere);
  fs.writeFileSync(path.join(elsewhere, 'secret.json'), '{"type":"user.message","content":"HOST SECRET"}');
  fs.symlinkSync(elsewhere, p.inbox);
  assert.equal(inboxHasFiles(p), true);
  const r = await b.wake(id);
  assert.equal(r.outcome, 'skipped');
  assert.ok(r.errors.some((e) => /^inbox\/ is not a directory/.test(e)), r.errors.join('; '));
  assert.deepEqual(fs.readdirSync(elsewhere), ['secret.json']);
  assert.doesNotMatch(logText(b, id), /HOST SECRET/);
  assert.ok(fs.lstatSync(path.join(path.dirname(p.inbox), '.refused-inbox')).isSymbolicLink());
  assert.equal(fs.existsSync(p.inbox), false); // made on first use, like any session's
  assert.equal(inboxHasFiles(p), false);
  assert.deepEqual((await b.wake(id)).errors, []); // reported once
  drop(p.inbox, 'm.json', JSON.stringify({ type: 'user.message', content: 'after' }));
  assert.equal((await b.wake(id)).outcome, 'executed');
  assert.deepEqual(userTexts(b, id), ['after']);
  assert.deepEqual(fs.readdirSync(elsewhere), ['secret.json']);
});

test('.taking entries the drain did not name are left alone; a file with a second hard link is refused unread', async (t) => {
  const b = await bench(t);
  const id = b.session();
  const p = withInbox(b, id);
  const taking = path.join(p.inbox, '.taking');
  fs.mkdirSync(taking);
  fs.writeFileSync(path.join(taking, 'notes.json'), '{"type":"user.message","content":"STRAY"}');
  const outside = path.join(b.h.root, 'outside.json');
  fs.writeFileSync(outside, '{"type":"user.message","content":"LINKED"}');
  fs.linkSync(outside, path.join(p.inbox, 'linked.json'));
  const r = drainInbox(p, b.deps.ids, [], longQuiet);
  assert.equal(r.lines, 0);
  assert.match(r.problems.join('; '), /inbox\/linked\.json: has 2 hard links.*left as inbox\/\.refused-linked\.json/);
  assert.doesNotMatch(logText(b, id), /STRAY|LINKED/);
  assert.deepEqual(fs.readdirSync(taking), ['notes.json']);
  assert.equal(fs.readFileSync(outside, 'utf8'), '{"type":"user.message","content":"LINKED"}');
  assert.equal(inboxHasFiles(p), false); // a stray in .taking does not keep the daemon waking the session
});

test('.taking entries named as the drain names a file but not UTF-8 are set aside and reported, and hold nothing back', async (t) => {
  const b = await bench(t);
  const id = b.session();
  const p = withInbox(b, id);
  const taking = path.join(p.inbox, '.taking');
  fs.mkdirSync(taking);
  // As many as a drain takes: counted as waiting files, they would leave no room for a new one.
  for (let i = 0; i < 256; i++) fs.writeFileSync(Buffer.concat([Buffer.from(`${taking}/${randomUUID()}-m${i}`), Buffer.from([0xff])]), '{"type":"user.message","content":"ODD"}\n');
  drop(p.inbox, 'new.json', JSON.stringify({ type: 'user.message', content: 'let in' }));
  const r = drainInbox(p, b.deps.ids, [], longQuiet);
  assert.deepEqual([r.files, r.lines], [1, 1]);
  assert.deepEqual(userTexts(b, id), ['let in']);
  assert.equal(r.problems.length, 256, 'each reported');
  assert.match(r.problems[0]!, /^inbox\/m\d+\uFFFD: in inbox\/\.taking under a name that is not valid UTF-8 .*; left as inbox\/\.refused-m\d+\uFFFD$/);
  assert.deepEqual(fs.readdirSync(taking), [], 'set aside, and .append gone with them');
  assert.equal(fs.readdirSync(p.inbox).filter((n) => n.startsWith('.refused-m')).length, 256);
  assert.doesNotMatch(logText(b, id), /ODD/);
  assert.equal(inboxHasFiles(p), false);
  assert.deepEqual(drainInbox(p, b.deps.ids, [], longQuiet).problems, [], 'reported once');
});

test('files are taken in the byte order of their names, 256 a drain, the rest by the next', async (t) => {
  const b = await bench(t);
  const id = b.session();
  const p = withInbox(b, id);
  const names = Array.from({ length: 300 }, (_, i) => `m${String(i).padStart(3, '0')}.json`);
  // Written in an order that is not theirs; one name that is not UTF-8 sorts after them all.
  for (const i of names.keys()) {
    const name = names[(i * 7) % names.length]!;
    drop(p.inbox, name, JSON.stringify({ type: 'user.message', content: name }));
  }
  fs.writeFileSync(Buffer.concat([Buffer.from(`${p.inbox}/z`), Buffer.from([0xff])]), JSON.stringify({ type: 'user.message', content: 'last' }));
  const first = drainInbox(p, b.deps.ids, [], longQuiet);
  assert.equal(first.files, 256);
  assert.deepEqual(userTexts(b, id), names.slice(0, 256));
  const rest = drainInbox(p, b.deps.ids, [], longQuiet);
  assert.equal(rest.files, 45);
  assert.deepEqual(userTexts(b, id), [...names, 'last']);
  assert.equal(inboxHasFiles(p), false);
});

test('the signature of a crowded inbox is a short string, and changes with any file a drain could take', async (t) => {
  const b = await bench(t);
  const id = b.session();
  const p = withInbox(b, id);
  for (let i = 0; i < 600; i++) fs.writeFileSync(path.join(p.inbox, `m${String(i).padStart(3, '0')}.json`), '');
  const sig = inboxSignature(p);
  assert.ok(sig !== null && sig.length <= 100, `${sig?.length} characters`); // held for every inbox the daemon judges stuck
  assert.equal(inboxSignature(p), sig);
  // One of the names a drain takes first gone, one name added after them all: as many files as before.
  fs.unlinkSync(path.join(p.inbox, 'm000.json'));
  fs.writeFileSync(path.join(p.inbox, 'z.json'), '');
  const swapped = inboxSignature(p);
  assert.notEqual(swapped, sig);
  fs.writeFileSync(path.join(p.inbox, 'zz.json'), '');
  assert.notEqual(inboxSignature(p), swapped);
  for (const n of fs.readdirSync(p.inbox)) if (!n.startsWith('.')) fs.unlinkSync(path.join(p.inbox, n));
  assert.equal(inboxSignature(p), null);
});

test('a file nested 200,000 deep is refused and reported; the session goes on', async (t) => {
  const b = await bench(t, { steps: [{ text: 'still here' }] });
  const id = b.session();
  const p = b.store.paths(id);
  const depth = 200_000;
  drop(p.inbox, 'deep.json', `{"type":"user.message","content":"x","deep":${'['.repeat(depth)}${']'.repeat(depth)}}`);
  const r = await b.wake(id); // used to throw RangeError, and every later wake with it
  assert.equal(r.outcome, 'skipped');
  assert.ok(r.errors.some((e) => /inbox\/deep\.json: JSON nested more than 64 levels deep .*left as inbox\/\.refused-deep\.json/.test(e)), r.errors.join('; '));
  assert.ok(fs.existsSync(path.join(p.inbox, '.refused-deep.json')));
  assert.deepEqual(fs.readdirSync(path.join(p.inbox, '.taking')), []);
  drop(p.inbox, 'after.json', JSON.stringify({ type: 'user.message', content: 'after' }));
  const r2 = await b.wake(id);
  assert.equal(r2.outcome, 'executed');
  assert.deepEqual(userTexts(b, id), ['after']);
});

test('a file of 200,000 lines is moved in whole; a stamp is the last key, so a line\'s own "inbox" cannot win', async (t) => {
  const b = await bench(t);
  const id = b.session();
  const p = b.store.paths(id);
  const n = 200_000;
  const lines = Array.from({ length: n }, (_, i) => (i === 0 ? '{"inbox":"forged","type":"user.message","content":"m0"}' : `{"type":"user.message","content":"m${i}"}`));
  drop(p.inbox, 'many.jsonl', `${lines.join('\n')}\n`);
  // and one pretty-printed object, nested as deep as a line may be
  let nested = '"leaf"';
  for (let i = 0; i < 61; i++) nested = `{\n  "k": ${nested}\n}`;
  drop(p.inbox, 'pretty.json', `{\n  "type": "user.message",\n  "content": "pretty \\"quoted\\"   spaces",\n  "deep": ${nested}\n}\n`);
  const r = drainInbox(p, b.deps.ids, [], longQuiet);
  assert.deepEqual(r.problems, []);
  assert.equal(r.lines, n + 1);
  const logged = logText(b, id).split('\n').filter((l) => l.includes('"inbox"'));
  assert.equal(logged.length, n + 1);
  const first = JSON.parse(logged[0]!) as { inbox: string };
  assert.match(first.inbox, /^[0-9a-f-]{36}-many\.jsonl$/);
  assert.equal(new Set(logged.slice(0, n).map((l) => (JSON.parse(l) as { inbox: string }).inbox)).size, 1);
  const pretty = JSON.parse(logged[n]!) as { content: string; inbox: string };
  assert.equal(pretty.content, 'pretty "quoted"   spaces');
  assert.match(pretty.inbox, /-pretty\.json$/);
  assert.equal(userTexts(b, id).length, n + 1);
});

/** An append that writes only the first `keep` bytes of what it was given, then dies (what a kill -9 during write(2) leaves). */
const cutShort = (keep: (text: string) => number) => (file: string, lines: readonly string[]) => {
  const text = `${lines.join('\n')}\n`;
  fs.appendFileSync(file, Buffer.from(text).subarray(0, keep(text)));
  throw new Error('killed');
};

test('a move cut short mid-append appends, on recovery, exactly the lines the log lacks', async (t) => {
  const b = await bench(t);
  const id = b.session();
  const p = b.store.paths(id);
  const msg = (s: string) => JSON.stringify({ type: 'user.message', content: s });
  drop(p.inbox, '1.jsonl', [msg('a1'), 'not json', msg('a2'), msg('a3')].join('\n'));
  drop(p.inbox, '2.json', msg('b1'));
  // Cut inside the third message's text. (Not at a bare 'a3': the stamps carry random hex ids, which can hold 'a3'.)
  const cut = drainInbox(p, b.deps.ids, [], { ...longQuiet, append: cutShort((text) => text.indexOf('"content":"a3"') + 13) });
  assert.match(cut.problems.join(), /the move stopped \(killed\)/);
  const seen = () => `inbox: ${fs.readdirSync(p.inbox).join(',')}; .taking: ${fs.readdirSync(path.join(p.inbox, '.taking')).join(',')}; log tail: ${logText(b, id).slice(-300)}`;
  assert.deepEqual(userTexts(b, id), ['a1', 'a2'], `the first drain said: ${cut.problems.join(' | ')}; ${seen()}`); // the old drain unlinked here
  assert.match(logText(b, id), /"a3$/); // a torn piece of the third line
  const r = drainInbox(p, b.deps.ids, b.store.snapshot(id).inbox_taken, longQuiet);
  assert.deepEqual(r.problems, []);
  assert.equal(r.files, 2);
  assert.equal(r.lines, 2);
  assert.deepEqual(userTexts(b, id), ['a1', 'a2', 'a3', 'b1']);
  assert.equal(logText(b, id).split('\n').filter((l) => l === 'not json').length, 1);
  assert.deepEqual(fs.readdirSync(path.join(p.inbox, '.taking')), []);
});

test('a move cut short after the whole append (or between a line and its newline) appends nothing again', async (t) => {
  const b = await bench(t);
  const id = b.session();
  const p = b.store.paths(id);
  const msg = (s: string) => JSON.stringify({ type: 'user.message', content: s });
  drop(p.inbox, '1.jsonl', [msg('a1'), msg('a2'), 'trailing junk'].join('\n'));
  drop(p.inbox, '2.jsonl', [msg('b1'), msg('b2')].join('\n'));
  drainInbox(p, b.deps.ids, [], { ...longQuiet, append: cutShort((text) => Buffer.byteLength(text) - 1) });
  const r = drainInbox(p, b.deps.ids, b.store.snapshot(id).inbox_taken, longQuiet);
  assert.deepEqual([r.files, r.lines, r.problems], [2, 0, []]);
  // the last line lacks its "\n": the daemon seals such a line, and it reads as whole
  assert.equal(sealTail(p.events), true);
  fs.appendFileSync(p.events, `${msg('later')}\n`);
  assert.deepEqual(userTexts(b, id), ['a1', 'a2', 'b1', 'b2', 'later']);
  assert.equal(logText(b, id).split('\n').filter((l) => l === 'trailing junk').length, 1);
});

test('a refused file is reported once, and a second refusal of the same name keeps the first', async (t) => {
  const b = await bench(t);
  const id = b.session();
  const p = withInbox(b, id);
  fs.symlinkSync('/etc/hostname', path.join(p.inbox, 'x.json'));
  assert.equal(drainInbox(p, b.deps.ids, [], longQuiet).problems.length, 1);
  fs.mkdirSync(path.join(p.inbox, 'x.json'));
  const second = drainInbox(p, b.deps.ids, [], longQuiet);
  const second2 = /left as inbox\/(\.refused-x\.json\.[0-9a-f]{12})$/.exec(second.problems.join())?.[1];
  assert.ok(second2, second.problems.join());
  assert.ok(fs.lstatSync(path.join(p.inbox, '.refused-x.json')).isSymbolicLink());
  assert.ok(fs.lstatSync(path.join(p.inbox, second2)).isDirectory());
  assert.deepEqual(drainInbox(p, b.deps.ids, [], longQuiet).problems, []);
  assert.equal(inboxHasFiles(p), false);
  // not UTF-8: refused, not decoded into something else
  fs.writeFileSync(path.join(p.inbox, 'bad.json'), Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x7d, 0x0a]));
  const third = drainInbox(p, b.deps.ids, [], longQuiet);
  assert.match(third.problems.join(), /inbox\/bad\.json: not valid UTF-8/);
});

test('drainInbox never throws: an append that fails leaves the files for the next drain', async (t) => {
  const b = await bench(t);
  const id = b.session();
  const p = b.store.paths(id);
  drop(p.inbox, 'm.json', JSON.stringify({ type: 'user.message', content: 'kept' }));
  const log = fs.readFileSync(p.events);
  fs.rmSync(p.events);
  fs.mkdirSync(p.events); // an append fails (EISDIR)
  const r = drainInbox(p, b.deps.ids, [], longQuiet);
  assert.deepEqual([r.files, r.lines], [0, 0]);
  assert.match(r.problems.join(), /the move stopped \(EISDIR\)/);
  fs.rmdirSync(p.events);
  fs.writeFileSync(p.events, log);
  const r2 = drainInbox(p, b.deps.ids, [], longQuiet);
  assert.deepEqual([r2.files, r2.lines, r2.problems], [1, 1, []]);
  assert.deepEqual(userTexts(b, id), ['kept']);
});

test('a file written in place is left alone while it looks unfinished and was touched within the quiet period', async (t) => {
  const b = await bench(t);
  const id = b.session();
  const p = withInbox(b, id);
  const fd = fs.openSync(path.join(p.inbox, 'slow.jsonl'), 'w');
  t.after(() => fs.closeSync(fd));
  fs.writeSync(fd, '{"type":"user.message","content":"first"}\n{"type":"user.message","content":"sec');
  const soon = drainInbox(p, b.deps.ids, [], { now: () => Date.now(), quietMs: 3_600_000 });
  assert.deepEqual([soon.files, soon.lines, soon.deferred, soon.problems], [0, 0, 1, []]);
  assert.equal(inboxHasFiles(p), true); // the daemon looks again
  fs.writeSync(fd, 'ond"}\n');
  const done = drainInbox(p, b.deps.ids, [], { now: () => Date.now(), quietMs: 3_600_000 });
  assert.deepEqual([done.files, done.lines, done.deferred], [1, 2, 0]);
  assert.deepEqual(userTexts(b, id), ['first', 'second']);
  // once quiet, an unfinished file is judged as it is: its last line is a bad line
  fs.writeFileSync(path.join(p.inbox, 'stuck.jsonl'), '{"type":"user.message","content":"third"}\n{"type":"user.mess');
  const t0 = fs.statSync(path.join(p.inbox, 'stuck.jsonl')).mtimeMs;
  assert.equal(drainInbox(p, b.deps.ids, [], { now: () => t0 + 100, quietMs: 250 }).deferred, 1);
  const judged = drainInbox(p, b.deps.ids, [], { now: () => t0 + 250, quietMs: 250 });
  assert.deepEqual([judged.files, judged.lines], [1, 2]);
  assert.deepEqual(userTexts(b, id), ['first', 'second', 'third']);
  // an empty file, once quiet, is refused rather than silently dropped
  fs.writeFileSync(path.join(p.inbox, 'empty.json'), '');
  assert.match(drainInbox(p, b.deps.ids, [], longQuiet).problems.join(), /inbox\/empty\.json: holds no event/);
});

test('a refused inbox file is reported in the log at once, even when nothing runs, and only once', async (t) => {
  const b = await bench(t);
  const id = b.session();
  const p = withInbox(b, id);
  fs.symlinkSync('/etc/hostname', path.join(p.inbox, 'link.json'));
  const r = await b.wake(id);
  assert.equal(r.outcome, 'skipped');
  const reports = () => b.events(id).filter((e) => e.type === 'session.error' && e.error.code === 'invalid_inbox_file');
  assert.equal(reports().length, 1);
  const first = reports()[0]!;
  assert.match(first.type === 'session.error' ? first.error.message : '', /inbox\/link\.json/);
  const snap = b.store.snapshot(id);
  assert.deepEqual(snap.rejected, [], 'the report is accepted');
  assert.equal(snap.last_error, null, 'it is not the error of a run');
  await b.wake(id);
  assert.equal(reports().length, 1, 'reported once');
});

test('a directory where the drain keeps its marker, and names taken in advance, do not stop the inbox', async (t) => {
  const b = await bench(t, { steps: [{ text: 'ok' }] });
  const id = b.session();
  const p = b.store.paths(id);
  fs.mkdirSync(path.join(p.inbox, '.taking', '.append'), { recursive: true });
  for (const n of ['.refused-link.json', '.refused-link.json.2', '.refused-link.json.3']) fs.writeFileSync(path.join(p.inbox, n), 'taken in advance');
  fs.symlinkSync('/etc/hostname', path.join(p.inbox, 'link.json'));
  drop(p.inbox, 'm.json', JSON.stringify({ type: 'user.message', content: 'still delivered' }));
  const r = await b.wake(id);
  assert.equal(r.outcome, 'executed');
  assert.deepEqual(userTexts(b, id), ['still delivered']);
  const refused = fs.readdirSync(p.inbox).filter((n) => n.startsWith('.refused-link.json.') && /\.[0-9a-f]{12}$/.test(n));
  assert.equal(refused.length, 1, fs.readdirSync(p.inbox).join(', '));
  assert.deepEqual(fs.readdirSync(path.join(p.inbox, '.taking')).filter((n) => !n.startsWith('.junk-')), []);
});

test('a file that arrives while another process holds the lease is taken as soon as the lease is free, not a sweep later', async (t) => {
  const b = await bench(t, { steps: [{ text: 'taken' }] });
  const id = b.session();
  const p = b.store.paths(id);
  const held = await acquireLease(p, { purpose: 'test', nowIso: new Date(b.deps.clock.now()).toISOString() });
  const td = await startDaemon(t, b);
  drop(p.inbox, 'm.json', JSON.stringify({ type: 'user.message', content: 'while busy' }));
  td.d.evaluate(id);
  // the run met the lease and backs off (on the manual clock); no drain ran, so the inbox is not "stuck"
  await b.deps.clock.armed(LEASE_STALE_MS + 1000);
  await held.release();
  await b.deps.clock.advance(LEASE_STALE_MS + 1000);
  const r = await td.result((x) => x.session_id === id && x.outcome === 'executed');
  assert.equal(r.processed_event_ids.length, 1);
});
