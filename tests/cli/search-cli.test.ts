/** `openboa search` and `openboa reindex`, and two processes catching up one index at once. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { tempHome } from '../helpers/home.js';
import Database from 'better-sqlite3';
import { cli } from '../helpers/cli.js';

function session(root: string, agent: string, n: number, text: string): string {
  const id = `01a20000-0000-7000-8000-${String(n).padStart(12, '0')}`;
  const dir = path.join(root, 'sessions', id);
  fs.mkdirSync(dir, { recursive: true });
  const created = { type: 'session.created', id: `sevt_c${n}`, created_at: '2026-01-01T00:00:00.000Z', format: 1, agent_id: agent, environment_id: 'local', title: `t${n}` };
  fs.writeFileSync(path.join(dir, 'events.jsonl'), `${JSON.stringify(created)}\n${JSON.stringify({ type: 'user.message', id: `sevt_m${n}`, created_at: '2026-01-01T00:00:01.000Z', content: text })}\n`);
  fs.writeFileSync(path.join(dir, 'wake-queue.jsonl'), '');
  return id;
}

test('openboa search finds candidates in every agent or one (--agent), prints them safely, and --json has the hits', async (t) => {
  const h = tempHome(t);
  const a = session(h.root, 'demo', 1, 'the lighthouse keeper logs the tide \u001b[2J\u001b]0;evil\u0007 cleared');
  session(h.root, 'claude', 2, 'another lighthouse, another agent');
  const all = await cli(['search', 'lighthouse', '--json'], { home: h.root });
  assert.equal(all.code, 0, all.stderr);
  assert.equal(JSON.parse(all.stdout).hits.length, 2);
  const one = await cli(['search', 'lighthouse', 'keeper', '--agent', 'demo', '--json'], { home: h.root });
  const hits = JSON.parse(one.stdout).hits;
  assert.equal(hits.length, 1);
  assert.equal(hits[0].session_id, a);
  assert.equal(hits[0].event_id, 'sevt_m1');
  const text = await cli(['search', 'tide'], { home: h.root });
  assert.equal(text.code, 0, text.stderr);
  assert.match(text.stdout, new RegExp(`${a}  sevt_m1  message`));
  assert.doesNotMatch(text.stdout, /\u001b/, 'terminal escapes from a log are not passed to the terminal');
  assert.match(text.stdout, /the session's log is the truth/);
  const none = await cli(['search', 'nothing-like-this'], { home: h.root });
  assert.match(none.stdout, /no candidates/);
  const bad = await cli(['search', 'x', '--agent', 'nobody'], { home: h.root });
  assert.notEqual(bad.code, 0);
});

test("openboa search --agent a never shows agent b's text as the snippet of a's hit", async (t) => {
  const h = tempHome(t);
  session(h.root, 'claude', 1, 'private of agent b: the vault code is 4711 zebra');
  const a = session(h.root, 'demo', 2, 'agent a just says zebra');
  const r = await cli(['search', 'zebra', '--agent', 'demo', '--json'], { home: h.root });
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout).hits.map((x: { session_id: string; snippet: string }) => [x.session_id, x.snippet]), [[a, 'agent a just says **zebra**']]);
  const text = await cli(['search', 'zebra', '--agent', 'demo'], { home: h.root });
  assert.doesNotMatch(text.stdout, /4711|vault/);
});

test('openboa reindex rebuilds from the logs; two processes catching up one index at once index each line once', async (t) => {
  const h = tempHome(t);
  for (let i = 0; i < 150; i++) session(h.root, 'demo', i, `common word and unique${i}`);
  const both = await Promise.all([cli(['search', 'common', '--json'], { home: h.root }), cli(['search', 'common', '--json'], { home: h.root })]);
  for (const r of both) assert.equal(r.code, 0, r.stderr);
  const db = new Database(path.join(h.root, '.openboa', 'search.sqlite'), { readonly: true });
  assert.equal((db.prepare('SELECT count(*) AS n FROM docs').get() as { n: number }).n, 150);
  assert.equal((db.prepare('SELECT count(DISTINCT event_id) AS n FROM docs').get() as { n: number }).n, 150);
  db.close();
  const re = await cli(['reindex', '--json'], { home: h.root });
  assert.equal(re.code, 0, re.stderr);
  const r = JSON.parse(re.stdout);
  assert.equal(r.sessions, 150);
  assert.equal(r.rows, 150);
  // And again, concurrently with searches (which catch up too).
  const mixed = await Promise.all([cli(['reindex', '--json'], { home: h.root }), cli(['search', 'unique7', '--json'], { home: h.root })]);
  for (const m of mixed) assert.equal(m.code, 0, m.stderr);
  const after = await cli(['search', 'unique42', '--json', '--limit', '50'], { home: h.root });
  assert.equal(JSON.parse(after.stdout).hits.length, 1);
  const count = await cli(['reindex', '--json'], { home: h.root });
  assert.equal(JSON.parse(count.stdout).rows, 150);
});
