/**
 * Cross-session search in-process: the real store, index (SQLite FTS5 on a
 * temp home), loop and tools; the queued model and the memory sandbox.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { sendMessage } from '../../src/core/ops/session-ops.js';
import { wake } from '../../src/core/run/wake.js';
import type { SessionEvent } from '../../src/core/schema/index.js';
import { searchDbFile } from '../../src/core/search/search-db.js';
import { readSessionTool, searchSessionsTool } from '../../src/core/tools/search-tools.js';
import { appendLearning, retireLearning } from '../../src/core/memory/learnings.js';
import { Redactor } from '../../src/core/foundation/redact.js';
import { validateLog } from '../helpers/event-schema.js';
import { searchBench as setup, SECRET } from '../helpers/search-bench.js';

test('search finds a fact from an old session, and read_session returns the events around it with secrets redacted', async (t) => {
  const s = setup(t);
  const old = s.session('unit', 'database setup');
  s.replies.push({ text: 'Noted: port 6543 for the staging database.' });
  // A person's message is written as sent: the secret is in the log itself.
  const fact = sendMessage(s.store, old, `The staging database listens on port 6543; connect with token ${SECRET}.`);
  sendMessage(s.store, old, 'remember it');
  await wake(s.rt, old);

  const now = s.session('unit', 'later');
  s.replies.push(
    { tools: [{ name: 'search_sessions', input: { query: 'staging database port' } }] },
    { tools: [{ name: 'read_session', input: { session_id: old, event_id: fact.id, before: 1, after: 6 } }] },
    { text: 'It is 6543.' },
  );
  sendMessage(s.store, now, 'which port does the staging database use?');
  await wake(s.rt, now);

  const results = s.events(now).filter((e): e is Extract<SessionEvent, { type: 'agent.tool_result' }> => e.type === 'agent.tool_result');
  assert.equal(results.length, 2);
  const [found, reread] = results.map((r) => r.content.map((b) => b.text).join(''));
  assert.equal(results[0]!.is_error, false, found);
  assert.match(found!, new RegExp(`session ${old} "database setup" · event ${fact.id} · message`));
  assert.match(found!, /\*\*staging\*\* \*\*database\*\*/);
  assert.match(found!, /hints from a search index; the session's log is the truth/);
  assert.doesNotMatch(found!, new RegExp(now), 'the searching session is not its own candidate');
  assert.equal(results[1]!.is_error, false, reread);
  assert.match(reread!, /listens on port 6543; connect with token \[REDACTED:API_KEY\]/);
  assert.match(reread!, /remember it/);
  assert.match(reread!, /agent\.message[^\n]*\n│ Noted: port 6543/);
  assert.match(reread!, /session\.created/, 'one event before the anchor');
  for (const text of [found, reread]) assert.doesNotMatch(text!, new RegExp(SECRET));
  // The index itself holds the redacted text: snippets go to a model.
  assert.doesNotMatch(fs.readFileSync(searchDbFile(s.h.home)).toString('latin1'), new RegExp(SECRET));
  validateLog(s.store.paths(now).events);
});

test("another agent's sessions are neither searchable nor readable by default, and are with search_scope: home", async (t) => {
  const s = setup(t);
  const mine = s.session('unit');
  const theirs = s.session('other', 'zoo');
  const fact = sendMessage(s.store, theirs, 'The zebra enclosure code is 4242.');

  const search = await searchSessionsTool.run({ query: 'zebra enclosure' }, s.ctx(mine));
  assert.equal(search.isError, false);
  assert.match(search.text, /No candidates/);
  const read = await readSessionTool.run({ session_id: theirs, event_id: fact.id }, s.ctx(mine));
  const ghost = '01a20000-0000-7000-8000-000000000000';
  const missing = await readSessionTool.run({ session_id: ghost }, s.ctx(mine));
  assert.equal(read.isError, true);
  assert.equal(read.text.replace(theirs, 'ID'), missing.text.replace(ghost, 'ID'), 'another agent\'s session reads exactly like one that does not exist');
  assert.doesNotMatch(read.text, /zebra/);

  s.agent('unit', 'home');
  const wide = await searchSessionsTool.run({ query: 'zebra enclosure' }, s.ctx(mine));
  assert.match(wide.text, new RegExp(`session ${theirs} "zoo" · agent other · event ${fact.id}`));
  const reread = await readSessionTool.run({ session_id: theirs, event_id: fact.id }, s.ctx(mine));
  assert.equal(reread.isError, false, reread.text);
  assert.match(reread.text, /zebra enclosure code is 4242/);
});

test('the index survives a restart (nothing read again), and a deleted index is rebuilt by the next search', async (t) => {
  const s = setup(t);
  const a = s.session();
  sendMessage(s.store, a, 'The kiln fires at 1280 degrees.');
  const me = s.session();
  const first = s.open();
  const r = first.catchUp();
  assert.equal(r.rows, 1);
  const before = first.stats();
  first.close();

  const again = s.open();
  assert.deepEqual(again.stats(), before);
  const r2 = again.catchUp();
  assert.equal(r2.sources, 0, 'nothing new: every cursor was saved');
  assert.equal(again.search('kiln', { agentId: 'unit', limit: 5 }).length, 1);
  again.close();

  fs.rmSync(path.join(s.h.root, '.openboa'), { recursive: true, force: true });
  const out = await searchSessionsTool.run({ query: 'kiln degrees' }, s.ctx(me));
  assert.match(out.text, new RegExp(`session ${a}`));
  assert.ok(fs.existsSync(searchDbFile(s.h.home)));

  // Garbage where the index was: made again, not an error.
  const third = s.open();
  third.close();
  fs.writeFileSync(searchDbFile(s.h.home), 'this is not a database '.repeat(100));
  for (const f of ['-wal', '-shm']) fs.rmSync(searchDbFile(s.h.home) + f, { force: true });
  const out2 = await searchSessionsTool.run({ query: 'kiln' }, s.ctx(me));
  assert.match(out2.text, new RegExp(`session ${a}`));
});

test('a query full of FTS operators and quotes is taken literally and never fails', async (t) => {
  const s = setup(t);
  const a = s.session();
  sendMessage(s.store, a, 'Use NEAR "quoted" text: col:value and (parens) AND stars*');
  const search = s.open();
  search.catchUp();
  const nasty = [
    '"',
    '""""',
    'AND OR NOT',
    'NEAR(a b, 3)',
    '(unbalanced',
    'col:value',
    'body : x',
    'scope : "a"',
    '^start* -minus +plus',
    "'); DROP TABLE docs; --",
    '{body scope}: x',
    '* * *',
    '\u0000\u0001',
    'ünïcödé 漢字 🙂',
  ];
  for (const q of nasty) assert.doesNotThrow(() => search.search(q, { agentId: 'unit', limit: 5 }), q);
  assert.equal(search.search('NEAR "quoted"', { agentId: 'unit', limit: 5 }).length, 1);
  assert.equal(search.search('col:value (parens)', { agentId: 'unit', limit: 5 }).length, 1);
  assert.equal(search.search('stars*', { agentId: 'unit', limit: 5 }).length, 1);
  // The scope column cannot be reached from a query: another agent's token is only text.
  assert.equal(search.search('scope : "a6f74686572"', { agentId: 'unit', limit: 5 }).length, 0);
  assert.equal(search.stats().rows, 1, 'the table is still there');
});

test('a malformed line does not stop indexing; a replaced log is indexed again from line 1', async (t) => {
  const s = setup(t);
  const a = s.session();
  sendMessage(s.store, a, 'first fact: the ferry leaves at nine');
  const search = s.open();
  search.catchUp();
  const log = s.store.paths(a).events;
  fs.appendFileSync(log, 'this is not json\n{"type":"user.message"}\n{"type":"nonsense.event","x":1}\n{"type":"user.message","content":"after the bad lines: marmalade"}\n');
  const r = search.catchUp();
  assert.deepEqual(r.problems, []);
  assert.equal(search.search('marmalade', { agentId: 'unit', limit: 5 }).length, 1);

  // The log replaced by another (restored from a copy, rewritten): its old rows go.
  const lines = fs.readFileSync(log, 'utf8').split('\n');
  const replacement = `${log}.new`;
  fs.writeFileSync(replacement, `${lines[0]}\n{"type":"user.message","content":"only the tram now"}\n`);
  fs.renameSync(replacement, log);
  search.catchUp();
  assert.equal(search.search('ferry', { agentId: 'unit', limit: 5 }).length, 0);
  assert.equal(search.search('marmalade', { agentId: 'unit', limit: 5 }).length, 0);
  assert.equal(search.search('tram', { agentId: 'unit', limit: 5 }).length, 1);
  assert.equal(search.stats().rows, 1);
});

test('rows and cursor commit together: a catch-up that dies before its cursor is saved leaves nothing, and the next one indexes each line once', async (t) => {
  const s = setup(t);
  const a = s.session();
  sendMessage(s.store, a, 'alpha one');
  const search = s.open();
  search.catchUp();
  for (let i = 0; i < 5; i++) sendMessage(s.store, a, `bravo ${i}`);
  // The cursor's write fails after the rows are in (as a kill -9 between the two would end it).
  search.db.exec(`CREATE TRIGGER die BEFORE UPDATE ON sessions BEGIN SELECT RAISE(ABORT, 'killed before the cursor'); END`);
  const r = search.catchUp();
  assert.match(r.problems[0]?.message ?? '', /killed before the cursor/);
  assert.equal(search.stats().rows, 1, 'the rows went with the cursor');
  search.db.exec('DROP TRIGGER die');
  search.catchUp();
  search.catchUp();
  assert.equal(search.stats().rows, 6);
  assert.equal(search.search('bravo', { agentId: 'unit', limit: 50 }).length, 5);
});

test('learnings are searchable; a retired one is not', async (t) => {
  const s = setup(t);
  const a = s.session();
  const me = s.session();
  const l = appendLearning(s.h.home, 'unit', { kind: 'lesson', source: 'agent', text: 'Always vendor the protobuf compiler.', tags: ['build'], sessionId: a, eventId: 'sevt_x', wakeId: null }, { clock: s.deps.clock, redactor: Redactor.none });
  const out = await searchSessionsTool.run({ query: 'protobuf compiler' }, s.ctx(me));
  assert.match(out.text, new RegExp(`session ${a} · event sevt_x · learning`));
  retireLearning(s.h.home, 'unit', l.id, s.deps.clock);
  const after = await searchSessionsTool.run({ query: 'protobuf compiler' }, s.ctx(me));
  assert.match(after.text, /No candidates/);
});

test('a long log is read in bounded chunks, and read_session without an event shows the end of the log', async (t) => {
  const s = setup(t);
  const a = s.session();
  const lines = Array.from({ length: 2500 }, (_, i) => JSON.stringify({ type: 'user.message', content: `note number ${i} ${i === 2400 ? 'quokka' : ''}` })).join('\n');
  fs.appendFileSync(s.store.paths(a).events, `${lines}\n`);
  const search = s.open();
  const r = search.catchUp();
  assert.equal(r.rows, 2500);
  assert.equal(search.search('quokka', { agentId: 'unit', limit: 5 }).length, 1);
  const me = s.session();
  const tail = await readSessionTool.run({ session_id: a, before: 1, after: 1 }, s.ctx(me));
  assert.match(tail.text, /note number 2499/);
  assert.match(tail.text, /note number 2497/);
  assert.doesNotMatch(tail.text, /note number 2496/);
  assert.match(tail.text, /\(the end of the log\)/);
});

test('a bounded catch-up reads the newest sessions first and says how many it left for later', async (t) => {
  const s = setup(t);
  const ids = Array.from({ length: 5 }, (_, i) => {
    const id = s.session();
    sendMessage(s.store, id, `numbat sighting ${i}`);
    return id;
  });
  const search = s.open();
  const r = search.catchUp('unit', { maxSessions: 2 });
  assert.equal(r.deferred, 3);
  assert.deepEqual(
    search.search('numbat', { agentId: 'unit', limit: 10 }).map((h) => h.session_id).sort(),
    ids.slice(3).sort(),
  );
  assert.equal(search.catchUp('unit').deferred, 0);
  assert.equal(search.search('numbat', { agentId: 'unit', limit: 10 }).length, 5);
});

test("the caller's own session, its learnings included, is left out however well it ranks; the scope holds; more are ranked when the best are left out", async (t) => {
  const s = setup(t);
  const own = s.session('unit', 'mine');
  for (let i = 0; i < 12; i++) sendMessage(s.store, own, `quokka quokka ${i}`);
  // The best-ranked documents of all: short, all the word. Learnings carry the session that learned them.
  for (let i = 0; i < 3; i++) appendLearning(s.h.home, 'unit', { kind: 'lesson', source: 'agent', text: `quokka ${i}`, tags: [], sessionId: own, eventId: `sevt_l${i}`, wakeId: null }, { clock: s.deps.clock, redactor: Redactor.none });
  const mate = s.session('unit', 'a colleague');
  sendMessage(s.store, mate, 'we saw one quokka near the long river path yesterday afternoon');
  const stranger = s.session('other', 'another agent');
  sendMessage(s.store, stranger, 'quokka');
  const search = s.open();
  search.catchUp();

  const all = search.search('quokka', { agentId: 'unit', limit: 50 });
  assert.ok(all.filter((h) => h.session_id === own).length >= 15, 'the word is found in the own session when it is not excluded');
  // The own session's learnings rank above the colleague's long line, so a ranking of the best 1 finds none of the others first.
  assert.equal(all.findIndex((h) => h.session_id === mate) > 3, true);

  for (const limit of [1, 2, 10]) {
    const hits = search.search('quokka', { agentId: 'unit', excludeSessionId: own, limit });
    assert.deepEqual(hits.map((h) => h.session_id), [mate], `limit ${limit}`);
  }
  const home = search.search('quokka', { agentId: null, excludeSessionId: own, limit: 10 });
  assert.deepEqual(new Set(home.map((h) => h.session_id)), new Set([mate, stranger]));
});

test("a hit's snippet is its own event's text: never another agent's, never another event's", async (t) => {
  const s = setup(t);
  // The attack as found: another agent's private line ranks first for the word (it was indexed first).
  const theirs = s.session('other', 'vault');
  sendMessage(s.store, theirs, 'private of agent b: the vault code is 4711 zebra');
  const mine = s.session('unit', 'mine');
  const own = sendMessage(s.store, mine, 'agent a just says zebra');
  const me = s.session('unit', 'asking');
  const search = s.open();
  search.catchUp();

  const hits = search.search('zebra', { agentId: 'unit', limit: 10 });
  assert.deepEqual(hits.map((h) => [h.session_id, h.event_id, h.snippet]), [[mine, own.id, 'agent a just says **zebra**']]);
  const tool = await searchSessionsTool.run({ query: 'zebra' }, s.ctx(me));
  assert.equal(tool.isError, false, tool.text);
  assert.match(tool.text, /agent a just says \*\*zebra\*\*/);
  assert.doesNotMatch(tool.text, /4711|vault code|private of agent b/);

  // Every hit shows its own event: many events of one word across sessions, each with a distinct tail.
  const ids = new Map<string, string>();
  for (let i = 0; i < 4; i++) {
    const sid = s.session('unit', `s${i}`);
    for (let j = 0; j < 3; j++) ids.set(sendMessage(s.store, sid, `I am back for my scheduled revisit, note ${i}-${j} ${'x'.repeat(i + j)}`).id, `note ${i}-${j}`);
  }
  search.catchUp();
  for (const agentId of ['unit', null]) {
    const all = search.search('revisit', { agentId, limit: 50 });
    assert.equal(all.length, 12);
    for (const h of all) assert.match(h.snippet, new RegExp(`${ids.get(h.event_id)!}( |$)`), h.event_id);
  }
});
